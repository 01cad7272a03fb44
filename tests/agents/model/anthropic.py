# The Anthropic Messages API, as model_server.py's script plays it
# (Claude Code is its client).
#
#   POST /v1/messages                  JSON, or SSE when "stream": true
#                                      (message_start, content_block_start,
#                                      ping, content_block_delta,
#                                      content_block_stop, message_delta with
#                                      stop_reason and usage, message_stop)
#   POST /v1/messages/count_tokens     {"input_tokens": N}
#   GET  /v1/models, /v1/models/ID     the one model the script "is"
#   HEAD|GET /api/hello                Claude Code's connectivity preflight
#
# A request's step is the number of tool_result blocks its conversation
# carries.  Requests that declare none of the script's tools (Claude Code's
# side requests: a session title, a quota probe) get the final text, and
# their conversations are not read for results.
import json
import time
import uuid

MODEL = "claude-sonnet-4-5-20250929"
MODELS = [MODEL, "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001"]


def _text(content):
    """The text of a tool_result's content: a string or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _tool_results(body):
    out = []
    for m in body.get("messages") or []:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.append(_text(b.get("content")))
    return out


def _tools(body):
    return {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}


def _props(tool):
    return set(((tool or {}).get("input_schema") or {}).get("properties") or {})


def _call(step, tools):
    """The tool_use block (name, input) for STEP among TOOLS, or None."""
    if "shell" in step:
        t = tools.get("Bash")
        if t is None:
            return None
        return "Bash", {"command": step["shell"], "description": "Run the script's step"} \
            if "description" in _props(t) else {"command": step["shell"]}
    if "write" in step:
        if "Write" not in tools:
            return None
        w = step["write"]
        return "Write", {"file_path": w["path"], "content": w["content"]}
    if "tool" in step:
        if step["tool"] not in tools:
            return None
        return step["tool"], step.get("input", {})
    return None


def _usage(req):
    return {"input_tokens": max(1, len(req.raw) // 4), "output_tokens": 0,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def messages(req, script):
    body = req.json
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        req.send_json(400, {"type": "error", "error": {
            "type": "invalid_request_error", "message": "messages: a list is required"}})
        return
    tools = _tools(body)
    call = None
    if "Bash" in tools or "Write" in tools:
        results = _tool_results(body)
        for i, out in enumerate(results):
            script.result(i, out)
        step = script.step(len(results))
        call = _call(step, tools) if step is not None else None
        if step is not None and call is None:
            text = f"the script's step {len(results)} names a tool this request does not declare"
        else:
            text = script.final
    else:
        text = script.final
    usage = _usage(req)
    if call:
        block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                 "name": call[0], "input": call[1]}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": text}
        stop = "end_turn"
    out_tokens = max(1, len(json.dumps(block)) // 4)
    msg = {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
           "model": body.get("model") or MODEL, "content": [], "stop_reason": None,
           "stop_sequence": None, "usage": dict(usage, output_tokens=1)}
    headers = [("request-id", "req_" + uuid.uuid4().hex[:24]),
               ("anthropic-organization-id", "00000000-0000-4000-8000-000000000000")]
    if not body.get("stream"):
        msg.update(content=[block], stop_reason=stop, usage=dict(usage, output_tokens=out_tokens))
        req.send_json(200, msg, headers)
        return
    req.h.send_response(200)
    req.h.send_header("Content-Type", "text/event-stream; charset=utf-8")
    req.h.send_header("Cache-Control", "no-cache")
    req.h.send_header("Transfer-Encoding", "chunked")
    for k, v in headers:
        req.h.send_header(k, v)
    req.h.end_headers()
    req.sse({"type": "message_start", "message": msg}, "message_start")
    if call:
        start = dict(block, input={})
        req.sse({"type": "content_block_start", "index": 0, "content_block": start},
                "content_block_start")
        req.sse({"type": "ping"}, "ping")
        js = json.dumps(block["input"])
        # The input arrives in pieces, as the API streams it.
        for i in range(0, len(js), 40):
            req.sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "input_json_delta", "partial_json": js[i:i + 40]}},
                    "content_block_delta")
    else:
        req.sse({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}}, "content_block_start")
        req.sse({"type": "ping"}, "ping")
        words = text.split(" ")
        for i, w in enumerate(words):
            req.sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": w if i == 0 else " " + w}},
                    "content_block_delta")
    req.sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    req.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": out_tokens}}, "message_delta")
    req.sse({"type": "message_stop"}, "message_stop")
    req.sse_end()


def count_tokens(req, script):
    if not isinstance(req.json, dict):
        req.send_json(400, {"type": "error", "error": {
            "type": "invalid_request_error", "message": "a JSON body is required"}})
        return
    req.send_json(200, {"input_tokens": max(1, len(req.raw) // 4)})


def _model(mid):
    return {"type": "model", "id": mid, "display_name": mid,
            "created_at": "2025-09-29T00:00:00Z"}


def models(req, script):
    req.send_json(200, {"data": [_model(m) for m in MODELS], "has_more": False,
                        "first_id": MODELS[0], "last_id": MODELS[-1]})


def model(req, script):
    mid = req.path.split("?")[0].rsplit("/", 1)[1]
    if mid not in MODELS:
        req.send_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": f"model: {mid}"}})
        return
    req.send_json(200, _model(mid))


def hello(req, script):
    # The API answers its preflight with a small JSON greeting.
    if req.method == "HEAD":
        req.h.send_response(200)
        req.h.send_header("Content-Type", "application/json")
        req.h.send_header("Content-Length", "0")
        req.h.end_headers()
        return
    req.send_json(200, {"message": "hello"})


ROUTES = [
    ("POST", r"/v1/messages", messages),
    ("POST", r"/v1/messages/count_tokens", count_tokens),
    ("GET", r"/v1/models", models),
    ("GET", r"/v1/models/[A-Za-z0-9._@-]+", model),
    ("GET", r"/api/hello", hello),
    ("HEAD", r"/api/hello", hello),
]
