# The Gemini API (generativelanguage.googleapis.com) as Gemini CLI uses it
# with an API key, for tests/agents/model_server.py:
#
#   POST /v1beta/models/MODEL:streamGenerateContent?alt=sse   the turns (SSE)
#   POST /v1beta/models/MODEL:generateContent                  side requests:
#        JSON-schema'd questions (the model router's classifier, the
#        next-speaker and loop checks), summaries
#   POST /v1beta/models/MODEL:countTokens                      {"totalTokens"}
#   GET  /v1beta/models[/MODEL]                                 the model list
#
# A conversation is "contents": [{"role": "user"|"model", "parts": [...]}];
# the model's tool call is a part {"functionCall": {"name", "args"}}, the
# CLI's answer a part {"functionResponse": {"id", "name", "response":
# {"output": TEXT} or {"error": TEXT}}} in a later user turn.  A streamed
# answer is "data: GenerateContentResponse\r\n\r\n" events, the last with
# "finishReason" and "usageMetadata", as the real API sends them.
import json, re, uuid

API = r"/v1(?:beta|alpha)?"
MODELS = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
          "gemini-3-pro-preview", "gemini-3-flash-preview"]


def _model(req):
    m = re.search(r"/models/([^/:?]+)", req.path)
    return m.group(1) if m else "gemini-2.5-pro"


def _text_of(parts):
    return "".join(p.get("text", "") for p in parts or [] if isinstance(p, dict))


def _tokens(obj):
    """A rough token count (4 bytes a token), as usageMetadata states it."""
    return max(1, len(json.dumps(obj)) // 4)


def _declared(body):
    """Names of the functions the request declares, in order."""
    names = []
    for t in (body or {}).get("tools") or []:
        for d in t.get("functionDeclarations") or []:
            if d.get("name"):
                names.append(d["name"])
    return names


def _pick(names, exact, hint):
    if exact in names:
        return exact
    for n in names:
        if hint in n:
            return n
    return exact


def _results(contents):
    """Every functionResponse of the conversation, in order: its output text."""
    out = []
    for c in contents or []:
        for p in c.get("parts") or []:
            fr = p.get("functionResponse") if isinstance(p, dict) else None
            if fr is None:
                continue
            r = fr.get("response") or {}
            if isinstance(r, dict) and isinstance(r.get("output"), str):
                out.append(r["output"])
            elif isinstance(r, dict) and isinstance(r.get("error"), str):
                out.append(r["error"])
            else:
                out.append(json.dumps(r))
    return out


def _call_part(step, names):
    """The functionCall part asking for one step of the script."""
    if "shell" in step:
        return {"functionCall": {"name": _pick(names, "run_shell_command", "shell"),
                                 "args": {"command": step["shell"]}}}
    if "write" in step:
        w = step["write"]
        return {"functionCall": {"name": _pick(names, "write_file", "write"),
                                 "args": {"file_path": w["path"], "content": w["content"]}}}
    return {"functionCall": {"name": step["tool"], "args": step.get("input", {})}}


def _usage(body, answer):
    p, c = _tokens(body.get("contents") or []), _tokens(answer)
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": p}]}


def _response(req, parts, body, finish=True):
    r = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
         "modelVersion": _model(req), "responseId": uuid.uuid4().hex[:22]}
    if finish:
        r["candidates"][0]["finishReason"] = "STOP"
        r["usageMetadata"] = _usage(body, parts)
    return r


def _schema_value(schema, name=""):
    """A value fitting a JSON schema: the side questions' answers.

    The questions Gemini CLI asks (who speaks next, is it looping, which
    model) get the answer that lets the turn end plainly: the user speaks
    next, no loop, the first model offered."""
    s = schema or {}
    t = s.get("type", "object")
    t = t.lower() if isinstance(t, str) else "object"
    if "enum" in s and s["enum"]:
        if name == "next_speaker" and "user" in s["enum"]:
            return "user"
        return s["enum"][0]
    if t == "object":
        return {k: _schema_value(v, k) for k, v in (s.get("properties") or {}).items()}
    if t == "array":
        return []
    if t == "boolean":
        return False
    if t in ("integer", "number"):
        # The router's "complexity_score" (1-100, its schema says in words):
        # the lowest in range.
        return s.get("minimum", 1)
    return "scripted model: " + name if name else "scripted model"


def _side_answer(body):
    """The text of an answer to a request that asks for JSON, or None."""
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if gc.get("responseMimeType") != "application/json" and schema is None:
        return None
    return json.dumps(_schema_value(schema))


def _turn(req, script):
    """The parts of the model's answer to a conversation turn."""
    body = req.json or {}
    side = _side_answer(body)
    if side is not None:
        return [{"text": side}]
    results = _results(body.get("contents"))
    for i, out in enumerate(results):
        script.result(i, out)
    step = script.step(len(results))
    if step is None:
        return [{"text": script.final}]
    return [_call_part(step, _declared(body))]


def _bad(req):
    req.send_json(400, {"error": {"code": 400, "message": "Invalid JSON payload received.",
                                  "status": "INVALID_ARGUMENT"}})


def generate(req, script):
    if not isinstance(req.json, dict):
        return _bad(req)
    req.send_json(200, _response(req, _turn(req, script), req.json))


def stream(req, script):
    if not isinstance(req.json, dict):
        return _bad(req)
    parts = _turn(req, script)
    req.sse_start()
    text = parts[0].get("text") if len(parts) == 1 else None
    if text and len(text) > 1:
        # Text comes in pieces, the last carrying finishReason and usage.
        half = len(text) // 2
        req.chunk("data: " + json.dumps(_response(req, [{"text": text[:half]}], req.json,
                                                   finish=False)) + "\r\n\r\n")
        parts = [{"text": text[half:]}]
    req.chunk("data: " + json.dumps(_response(req, parts, req.json)) + "\r\n\r\n")
    req.sse_end()


def count_tokens(req, script):
    body = req.json if isinstance(req.json, dict) else {}
    contents = body.get("contents") or (body.get("generateContentRequest") or {}).get("contents")
    req.send_json(200, {"totalTokens": _tokens(contents or []),
                        "promptTokensDetails": [{"modality": "TEXT",
                                                 "tokenCount": _tokens(contents or [])}]})


def _model_info(name):
    return {"name": "models/" + name, "baseModelId": name, "version": "001",
            "displayName": name, "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent", "countTokens"],
            "temperature": 1, "topP": 0.95, "topK": 64, "thinking": True}


def list_models(req, script):
    req.send_json(200, {"models": [_model_info(m) for m in MODELS]})


def get_model(req, script):
    req.send_json(200, _model_info(_model(req)))


ROUTES = [
    ("POST", API + r"/models/[^/:]+:streamGenerateContent", stream),
    ("POST", API + r"/models/[^/:]+:generateContent", generate),
    ("POST", API + r"/models/[^/:]+:countTokens", count_tokens),
    ("GET", API + r"/models", list_models),
    ("GET", API + r"/models/[^/:]+", get_model),
]
