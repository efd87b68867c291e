"""A Foxglove WebSocket client written from the published protocol spec
(github.com/foxglove/ws-protocol, docs/spec.md), independent of the server's
code: connects, reads serverInfo and advertise, subscribes to the topics
asked for, decodes every message as its channel's encoding says (json here),
and stops after the first message on /morc/run (a run ended; --runs=N: the N-th) or a timeout.
When the server has the parameters capability it asks for /robot_description (getParameters) as it
connects. Prints {"subprotocol", "server", "capabilities", "parameters": {name: value},
"channels": {topic: {...}}, "messages": {topic: [...]}, "stamps": {topic: [log time, ns]}} as JSON.
With --origin=URL it sends that Origin header, as a browser page of that origin would; a refused
handshake prints {"refused": HTTP status, "body": text, "messages": {}}.

usage: live_client.py [--runs=N] [--origin=URL] ws://host:port SUBPROTOCOL TIMEOUT_S topic...
"""
import asyncio
import json
import struct
import sys

import websockets


async def main(url, subprotocol, timeout, wanted, runs, origin):
    out = {"subprotocol": None, "server": None, "capabilities": [], "parameters": {}, "channels": {}, "messages": {}, "stamps": {}}
    subs = {}  # subscription id -> topic
    next_sub = 1
    try:
        ws = await websockets.connect(url, subprotocols=[subprotocol], max_size=None, origin=origin)
    except websockets.exceptions.InvalidStatus as e:
        print(json.dumps({"refused": e.response.status_code, "body": e.response.body.decode(errors="replace"), "messages": {}}))
        return
    async with ws:
        out["subprotocol"] = ws.subprotocol
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            try:
                msg = await asyncio.wait_for(ws.recv(), timeout=max(0.01, end - loop.time()))
            except (asyncio.TimeoutError, websockets.exceptions.ConnectionClosed):
                break
            if isinstance(msg, str):
                m = json.loads(msg)
                if m["op"] == "serverInfo":
                    out["server"] = m["name"]
                    out["capabilities"] = m.get("capabilities", [])
                    if "parameters" in out["capabilities"]:
                        await ws.send(json.dumps({"op": "getParameters", "parameterNames": ["/robot_description"], "id": "urdf"}))
                elif m["op"] == "parameterValues":
                    for p in m["parameters"]:
                        out["parameters"][p["name"]] = p.get("value")
                elif m["op"] == "advertise":
                    new = []
                    for ch in m["channels"]:
                        out["channels"][ch["topic"]] = {k: ch.get(k) for k in ("id", "encoding", "schemaName", "schemaEncoding")}
                        if ch["topic"] in wanted or "*" in wanted:
                            subs[next_sub] = (ch["topic"], ch["encoding"])
                            new.append({"id": next_sub, "channelId": ch["id"]})
                            next_sub += 1
                    if new:
                        await ws.send(json.dumps({"op": "subscribe", "subscriptions": new}))
                continue
            # Binary: opcode 0x01 message data = u8 op, u32 subscription id, u64 timestamp, payload.
            if msg[0] != 0x01:
                continue
            sub, stamp = struct.unpack_from("<IQ", msg, 1)
            topic, encoding = subs[sub]
            payload = msg[13:]
            if encoding != "json":
                raise SystemExit(f"channel {topic}: cannot decode encoding {encoding}")
            out["messages"].setdefault(topic, []).append(json.loads(payload))
            out["stamps"].setdefault(topic, []).append(stamp)
            if topic == "/morc/run" and len(out["messages"][topic]) >= runs:
                break
    print(json.dumps(out))


options = {a[2:].split("=", 1)[0]: a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--")}
args = [a for a in sys.argv[1:] if not a.startswith("--")]
asyncio.run(main(args[0], args[1], float(args[2]), set(args[3:]), int(options.get("runs", 1)), options.get("origin")))
