// Latency of sequential tools/call round trips through the official SDK
// client, to compare a server reached directly with the same server behind
// cordon mcp-proxy.
//
//   node tests/mcp/bench.mjs N TOOL ARGSJSON -- CMD [ARGS...]
//
// Connects, warms up with 50 calls (JIT, page cache, the server's lazy
// setup), then times N calls one after another and prints one line:
//   median_us p10_us p90_us
// A call that fails or returns isError aborts the run with exit 1: a bench of
// errors measures nothing. The server's stderr goes to ours; it inherits our
// environment.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const WARMUP = 50;

function die(msg, code = 2) {
    process.stderr.write(`bench.mjs: ${msg}\n`);
    process.exit(code);
}

// Nearest-rank percentile over an ascending array.
function percentile(sorted, p) {
    const rank = Math.ceil((p / 100) * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
if (sep !== 3 || sep === argv.length - 1)
    die('usage: node bench.mjs N TOOL ARGSJSON -- CMD [ARGS...]');
const n = Number(argv[0]);
if (!Number.isInteger(n) || n < 1)
    die(`N must be a positive integer, not ${JSON.stringify(argv[0])}`);
const name = argv[1];
let args;
try {
    args = JSON.parse(argv[2]);
} catch (err) {
    die(`ARGSJSON: ${err.message}`);
}

const client = new Client({ name: 'cordon-bench', version: '1.0.0' });
const transport = new StdioClientTransport({
    command: argv[sep + 1],
    args: argv.slice(sep + 2),
    env: { ...process.env },
    stderr: 'inherit',
});

async function call() {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError)
        throw new Error(`${name} returned isError: ${JSON.stringify(r.content)}`);
}

try {
    await client.connect(transport, { timeout: 20000 });
    for (let i = 0; i < WARMUP; i++)
        await call();
    const us = new Array(n);
    for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        await call();
        us[i] = Number((process.hrtime.bigint() - t0) / 1000n);
    }
    us.sort((a, b) => a - b);
    process.stdout.write(`${percentile(us, 50)} ${percentile(us, 10)} ${percentile(us, 90)}\n`);
} catch (err) {
    await client.close().catch(() => {});
    die(err instanceof Error ? err.message : String(err), 1);
}
await client.close().catch(() => {});
