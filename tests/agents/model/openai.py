# OpenAI's APIs for tests/agents/model_server.py: the Responses API
# (POST /v1/responses, what Codex CLI and OpenCode's "openai" provider
# speak), Chat Completions (POST /v1/chat/completions, OpenCode's
# OpenAI-compatible providers) and the model list (GET /v1/models).
#
# A request's step is the number of tool results its conversation carries
# (function_call_output, custom_tool_call_output; "tool" messages in Chat
# Completions), in order.  The answer is one tool call for the step, found
# by name among the tools the request declares (Codex groups some of them
# in a tool of type "namespace"), or the script's final text.
import json, time, uuid

MODELS = ["gpt-5.5", "gpt-5.4", "gpt-5.3-codex", "gpt-5.2", "gpt-5.1-codex", "gpt-5-codex",
          "gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4o", "o3", "o4-mini"]

# Shell tools by preference, and how each takes its command.
SHELLS = ["exec_command", "shell_command", "shell", "bash", "local_shell", "container.exec"]
WRITERS = ["write", "apply_patch", "write_file", "edit"]


def _id(prefix):
    return prefix + "_" + uuid.uuid4().hex[:24]


# --- the tools a request declares ---------------------------------------------

def declared_tools(tools, ns=None):
    """{name: (tool, namespace)} for every tool, namespaces' members included."""
    out = {}
    for t in tools or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            out.update(declared_tools(t.get("tools"), t.get("name")))
            continue
        if t.get("type") == "function" and isinstance(t.get("function"), dict):
            name = t["function"].get("name")     # Chat Completions' shape
        else:
            name = t.get("name") or t.get("type")
        if name:
            out.setdefault(name, (t, ns))
    return out


def _params(t):
    if isinstance(t.get("function"), dict):
        return t["function"].get("parameters") or {}
    return t.get("parameters") or {}


def shell_args(t, name, command):
    """The arguments of shell tool T for COMMAND, by its parameters' schema."""
    props = _params(t).get("properties") or {}
    if "cmd" in props:
        return {"cmd": command}
    if "command" in props:
        if (props["command"].get("type") == "array"):
            return {"command": ["bash", "-lc", command]}
        a = {"command": command}
        if "description" in props:
            a["description"] = "script step"
        return a
    return {"command": ["bash", "-lc", command]}


def shell_tool(tools):
    for n in SHELLS:
        if n in tools:
            return n
    return None


def patch_for(path, content):
    """An apply_patch body that makes PATH hold CONTENT (Add File overwrites)."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "*** Begin Patch\n*** Add File: %s\n%s\n*** End Patch\n" % (
        path, "\n".join("+" + l for l in lines))


def call_for(step, tools):
    """(name, namespace, arguments str, kind) of the tool call for STEP.

    kind is "function" or "custom" (a freeform tool: its input is raw text)."""
    if "tool" in step:
        t, ns = tools.get(step["tool"], ({}, None))
        return step["tool"], ns, json.dumps(step.get("input", {})), "function"
    if "write" in step:
        path, content = step["write"]["path"], step["write"]["content"]
        for n in WRITERS:
            if n not in tools:
                continue
            t, ns = tools[n]
            if n == "apply_patch":
                if t.get("type") == "custom":
                    return n, ns, patch_for(path, content), "custom"
                props = _params(t).get("properties") or {}
                key = "input" if "input" in props else next(iter(props), "input")
                return n, ns, json.dumps({key: patch_for(path, content)}), "function"
            if n == "edit":
                continue
            props = _params(t).get("properties") or {}
            pk = next((k for k in ("filePath", "file_path", "path", "absolute_path") if k in props), "path")
            return n, ns, json.dumps({pk: path, "content": content}), "function"
        # No writing tool: the shell writes it.
        cmd = "cat > '%s' <<'CORDON_EOF'\n%sCORDON_EOF" % (path, content if content.endswith("\n") else content + "\n")
        step = {"shell": cmd}
    name = shell_tool(tools)
    if name is None:
        raise LookupError("the request declares no shell tool (%s)" % ", ".join(sorted(tools)))
    t, ns = tools[name]
    return name, ns, json.dumps(shell_args(t, name, step["shell"])), "function"


# --- tool results in the conversation -----------------------------------------

def _text(v):
    """A tool output as text: a string, or a list of content parts."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in v)
    if isinstance(v, dict):
        return v.get("output") if isinstance(v.get("output"), str) else json.dumps(v)
    return "" if v is None else json.dumps(v)


def responses_results(inp):
    if not isinstance(inp, list):
        return []
    return [_text(i.get("output")) for i in inp if isinstance(i, dict) and
            i.get("type") in ("function_call_output", "custom_tool_call_output",
                              "local_shell_call_output", "shell_call_output",
                              "apply_patch_call_output")]


def chat_results(msgs):
    return [_text(m.get("content")) for m in msgs or [] if isinstance(m, dict) and m.get("role") == "tool"]


def is_side_request(body):
    """A request that is not the agent's turn: a title, a summary (no tools)."""
    return not body.get("tools")


# --- Responses API ------------------------------------------------------------

def usage(inp=100, out=20):
    return {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out}


def response_obj(body, rid, status, output, use=None):
    r = {"id": rid, "object": "response", "created_at": int(time.time()), "status": status,
         "error": None, "incomplete_details": None, "instructions": None,
         "model": body.get("model", "gpt-5"), "output": output, "parallel_tool_calls": True,
         "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
         "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}},
         "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
         "usage": use, "user": None, "metadata": {}}
    return r


def responses_items(body, script):
    """The output items of this turn."""
    results = responses_results(body.get("input"))
    for i, out in enumerate(results):
        script.result(i, out)
    step = None if is_side_request(body) else script.step(len(results))
    if step is None:
        text = script.final if not is_side_request(body) else "cordon script"
        return [{"type": "message", "id": _id("msg"), "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}]
    name, ns, args, kind = call_for(step, declared_tools(body.get("tools")))
    if kind == "custom":
        item = {"type": "custom_tool_call", "id": _id("ctc"), "call_id": _id("call"),
                "name": name, "input": args, "status": "completed"}
    else:
        item = {"type": "function_call", "id": _id("fc"), "call_id": _id("call"),
                "name": name, "arguments": args, "status": "completed"}
    if ns:
        item["namespace"] = ns
    return [item]


def _pieces(s, n=3):
    k = max(1, len(s) // n + 1)
    return [s[i:i + k] for i in range(0, len(s), k)] or [""]


def responses(req, script):
    body = req.json
    if not isinstance(body, dict):
        return req.send_json(400, {"error": {"message": "the body is not a JSON object",
                                             "type": "invalid_request_error", "param": None,
                                             "code": None}})
    try:
        items = responses_items(body, script)
    except LookupError as e:
        return req.send_json(400, {"error": {"message": str(e), "type": "invalid_request_error",
                                             "param": "tools", "code": None}})
    rid = _id("resp")
    if not body.get("stream"):
        return req.send_json(200, response_obj(body, rid, "completed", items, usage()))
    req.sse_start()
    seq = [0]

    def ev(kind, **kw):
        d = {"type": kind, "sequence_number": seq[0]}
        d.update(kw)
        seq[0] += 1
        req.sse(d, event=kind)

    ev("response.created", response=response_obj(body, rid, "in_progress", []))
    ev("response.in_progress", response=response_obj(body, rid, "in_progress", []))
    for oi, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            ev("response.output_item.added", output_index=oi,
               item=dict(item, status="in_progress", content=[]))
            ev("response.content_part.added", item_id=item["id"], output_index=oi, content_index=0,
               part={"type": "output_text", "text": "", "annotations": []})
            for p in _pieces(text):
                ev("response.output_text.delta", item_id=item["id"], output_index=oi,
                   content_index=0, delta=p, logprobs=[])
            ev("response.output_text.done", item_id=item["id"], output_index=oi, content_index=0,
               text=text, logprobs=[])
            ev("response.content_part.done", item_id=item["id"], output_index=oi, content_index=0,
               part=item["content"][0])
        elif item["type"] == "function_call":
            ev("response.output_item.added", output_index=oi,
               item=dict(item, status="in_progress", arguments=""))
            for p in _pieces(item["arguments"]):
                ev("response.function_call_arguments.delta", item_id=item["id"], output_index=oi,
                   delta=p)
            ev("response.function_call_arguments.done", item_id=item["id"], output_index=oi,
               arguments=item["arguments"])
        else:
            ev("response.output_item.added", output_index=oi,
               item=dict(item, status="in_progress", input=""))
            for p in _pieces(item["input"]):
                ev("response.custom_tool_call_input.delta", item_id=item["id"], output_index=oi,
                   delta=p)
            ev("response.custom_tool_call_input.done", item_id=item["id"], output_index=oi,
               input=item["input"])
        ev("response.output_item.done", output_index=oi, item=item)
    ev("response.completed", response=response_obj(body, rid, "completed", items, usage()))
    req.sse_end()


# --- Chat Completions ---------------------------------------------------------

def chat(req, script):
    body = req.json
    if not isinstance(body, dict):
        return req.send_json(400, {"error": {"message": "the body is not a JSON object",
                                             "type": "invalid_request_error", "param": None,
                                             "code": None}})
    results = chat_results(body.get("messages"))
    for i, out in enumerate(results):
        script.result(i, out)
    step = None if is_side_request(body) else script.step(len(results))
    cid, model, now = _id("chatcmpl"), body.get("model", "gpt-5"), int(time.time())
    msg, finish = {"role": "assistant", "content": None}, "stop"
    if step is None:
        msg["content"] = script.final \
            if not is_side_request(body) or script.plain else "cordon script"
    else:
        try:
            name, _, args, _ = call_for(step, declared_tools(body.get("tools")))
        except LookupError as e:
            return req.send_json(400, {"error": {"message": str(e), "type": "invalid_request_error",
                                                 "param": "tools", "code": None}})
        msg["tool_calls"] = [{"id": _id("call"), "type": "function",
                              "function": {"name": name, "arguments": args}}]
        finish = "tool_calls"
    use = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    if not body.get("stream"):
        return req.send_json(200, {"id": cid, "object": "chat.completion", "created": now,
                                   "model": model, "choices": [{"index": 0, "message": msg,
                                                                "logprobs": None,
                                                                "finish_reason": finish}],
                                   "usage": use})
    req.sse_start()

    def chunk(delta, fr=None, **kw):
        d = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": fr}]}
        d.update(kw)
        req.sse(d)

    chunk({"role": "assistant", "content": ""})
    if msg.get("content"):
        for p in _pieces(msg["content"]):
            chunk({"content": p})
    for k, tc in enumerate(msg.get("tool_calls") or []):
        chunk({"tool_calls": [{"index": k, "id": tc["id"], "type": "function",
                               "function": {"name": tc["function"]["name"], "arguments": ""}}]})
        for p in _pieces(tc["function"]["arguments"]):
            chunk({"tool_calls": [{"index": k, "function": {"arguments": p}}]})
    chunk({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        d = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
             "choices": [], "usage": use}
        req.sse(d)
    req.sse("[DONE]")
    req.sse_end()


# --- models -------------------------------------------------------------------

def model_obj(m):
    return {"id": m, "object": "model", "created": 1700000000, "owned_by": "openai"}


def models(req, script):
    req.send_json(200, {"object": "list", "data": [model_obj(m) for m in MODELS]})


def model(req, script):
    m = req.path.split("?")[0].rsplit("/", 1)[-1]
    req.send_json(200, model_obj(m))


def no_websocket(req, script):
    """Responses over a WebSocket (GET /v1/responses, Upgrade: websocket): not
    spoken here; 426 has Codex fall back to HTTPS at once."""
    req.send_json(426, {"error": {"message": "WebSocket transport is not available: use HTTPS",
                                  "type": "invalid_request_error", "param": None, "code": None}})


ROUTES = [
    ("GET", r"/(v1/)?responses", no_websocket),
    ("POST", r"/(v1/)?responses", responses),
    ("POST", r"/(v1/)?chat/completions", chat),
    ("GET", r"/(v1/)?models", models),
    ("GET", r"/(v1/)?models/[^/]+", model),
]
