// Drive a stdio MCP server (or cordon mcp-proxy in front of one) with the
// official TypeScript SDK client, so the tests see exactly what a real MCP
// host sends and how it reads the answers.
//
//   node tests/mcp/client.mjs STEPS.json -- CMD [ARGS...]
//
// STEPS.json is an array of steps, or an object
// {"roots": [...], "connect_timeout_ms": T, "steps": [...]}.
// With "roots" (a list of {uri, name?}) the client declares the roots
// capability and answers the server's roots/list with that list; without it the
// client declares no capabilities at all. initialize gives up after
// connect_timeout_ms (default 20000; the SDK's own default is 60 s), so a
// proxy that never answers fails a test quickly.
//
// Steps, each giving one entry of the output's "steps" array:
//   {"op":"list"}                                   -> {"tools":[..], "schemas":{name: inputSchema}}
//   {"op":"call","name":N,"args":{},"timeout_ms":T} -> {"result": CallToolResult} | {"error": E}
//   {"op":"ping"}                                   -> {"ok": true} | {"error": E}
//   {"op":"call_cancel","name":N,"args":{},"after_ms":M}
//                     aborts the call after M ms    -> {"error": E} | {"result": ...}
//   {"op":"call_progress","name":N,"args":{}}       -> {"result": ..., "progress":[{progress,total}]}
//                                                      (or {"error": E, "progress": [...]})
//   {"op":"request","method":M,"params":{}}         -> {"result": raw result} | {"error": E}
//                     any other request (prompts/list, resources/read, logging/setLevel...)
//   {"op":"set_roots","roots":[...]}                -> {"ok": true}; sends roots/list_changed
//   {"op":"sleep","ms":M}                           -> {"ok": true}
// E is {"code": JSON-RPC code or null, "message": "..."} (plus "data" if any).
// A failing step never stops the following ones.
//
// Output: one JSON document on stdout,
//   {"server": {name, version, protocolVersion, capabilities}, "steps": [...]}.
// The server's stderr goes to ours. The server inherits our whole environment
// (the SDK's default would pass only HOME, PATH and a few more), so a test can
// steer cordon through its environment.
//
// Exit: 0 when the driver worked (whatever the steps returned), 1 when the
// connection or initialize failed ({"connect_error": E} on stdout), 2 on a
// usage error. MCP_CLIENT_TRACE=1 logs every JSON-RPC message, both ways, to
// stderr as "client.mjs: >> {...}" (sent) and "client.mjs: << {...}" (received).

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema, ResultSchema } from '@modelcontextprotocol/sdk/types.js';

function usage(msg) {
    process.stderr.write(`client.mjs: ${msg}\n` +
        'usage: node client.mjs STEPS.json -- CMD [ARGS...]\n');
    process.exit(2);
}

function errorJson(err) {
    const out = {
        code: Number.isInteger(err?.code) ? err.code : null,
        message: err instanceof Error ? err.message : String(err),
    };
    if (err?.data !== undefined)
        out.data = err.data;
    return out;
}

// The SDK keeps the negotiated version to itself except through this optional
// transport hook (meant for HTTP transports); stdio lacks it, so we add one.
// Tracing wraps send() and the onmessage slot the SDK fills in at connect().
function instrument(transport, trace) {
    const seen = { protocolVersion: null };
    transport.setProtocolVersion = (v) => { seen.protocolVersion = v; };
    if (!trace)
        return seen;
    const log = (dir, msg) => process.stderr.write(`client.mjs: ${dir} ${JSON.stringify(msg)}\n`);
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => { log('>>', msg); return send(msg, opts); };
    let onmessage;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        get: () => onmessage,
        set: (fn) => { onmessage = fn && ((msg, extra) => { log('<<', msg); return fn(msg, extra); }); },
    });
    return seen;
}

function splitArgv(argv) {
    const sep = argv.indexOf('--');
    if (sep < 0 || sep === argv.length - 1)
        return null;
    return { before: argv.slice(0, sep), command: argv[sep + 1], args: argv.slice(sep + 2) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function runStep(client, step, state) {
    const opts = {};
    if (step.timeout_ms !== undefined)
        opts.timeout = step.timeout_ms;
    const params = () => ({ name: step.name, arguments: step.args ?? {} });
    switch (step.op) {
    case 'list': {
        const { tools } = await client.listTools(undefined, opts);
        return {
            tools: tools.map((t) => t.name),
            schemas: Object.fromEntries(tools.map((t) => [t.name, t.inputSchema])),
        };
    }
    case 'call':
        return { result: await client.callTool(params(), undefined, opts) };
    case 'ping':
        await client.ping(opts);
        return { ok: true };
    case 'call_cancel': {
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(`client.mjs: cancelled after ${step.after_ms} ms`),
            step.after_ms ?? 0);
        try {
            return { result: await client.callTool(params(), undefined, { ...opts, signal: ac.signal }) };
        } finally {
            clearTimeout(timer);
        }
    }
    case 'call_progress': {
        const progress = [];
        const onprogress = (p) => progress.push({ progress: p.progress, total: p.total });
        try {
            return { result: await client.callTool(params(), undefined, { ...opts, onprogress }), progress };
        } catch (err) {
            return { error: errorJson(err), progress };
        }
    }
    case 'request': {
        const req = { method: step.method };
        if (step.params !== undefined)
            req.params = step.params;
        return { result: await client.request(req, ResultSchema, opts) };
    }
    case 'set_roots':
        state.roots = step.roots ?? [];
        await client.sendRootsListChanged();
        return { ok: true };
    case 'sleep':
        await sleep(step.ms ?? 0);
        return { ok: true };
    default:
        throw new Error(`unknown op ${JSON.stringify(step.op)}`);
    }
}

async function main() {
    const split = splitArgv(process.argv.slice(2));
    if (!split || split.before.length !== 1)
        usage('need exactly one STEPS.json before "--" and a command after it');
    let plan;
    try {
        plan = JSON.parse(readFileSync(split.before[0], 'utf8'));
    } catch (err) {
        usage(`${split.before[0]}: ${err.message}`);
    }
    const steps = Array.isArray(plan) ? plan : plan?.steps;
    if (!Array.isArray(steps))
        usage(`${split.before[0]}: expected an array of steps or {"steps": [...]}`);
    const state = { roots: Array.isArray(plan) ? undefined : plan.roots };

    const capabilities = state.roots !== undefined ? { roots: { listChanged: true } } : {};
    const client = new Client({ name: 'cordon-test-client', version: '1.0.0' }, { capabilities });
    if (state.roots !== undefined)
        client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: state.roots }));
    const transport = new StdioClientTransport({
        command: split.command,
        args: split.args,
        env: { ...process.env },
        stderr: 'inherit',
    });
    const seen = instrument(transport, process.env.MCP_CLIENT_TRACE === '1');

    try {
        await client.connect(transport, { timeout: plan.connect_timeout_ms ?? 20000 });
    } catch (err) {
        process.stdout.write(JSON.stringify({ connect_error: errorJson(err) }) + '\n');
        await client.close().catch(() => {});
        return 1;
    }
    const info = client.getServerVersion() ?? {};
    const out = {
        server: {
            name: info.name ?? null,
            version: info.version ?? null,
            protocolVersion: seen.protocolVersion,
            capabilities: client.getServerCapabilities() ?? {},
        },
        steps: [],
    };
    for (const step of steps) {
        try {
            out.steps.push(await runStep(client, step, state));
        } catch (err) {
            out.steps.push({ error: errorJson(err) });
        }
    }
    process.stdout.write(JSON.stringify(out) + '\n');
    await client.close().catch(() => {});
    return 0;
}

process.exitCode = await main();
