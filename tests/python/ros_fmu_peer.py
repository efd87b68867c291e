"""A ROS 2 peer of `morc ros fmu`, written with ROS 2's own Python client (rclpy on Fast DDS, from
PyPI: no ROS install). It drives an FMU node as a ROS 2 user would: publishes its inputs
(std_msgs), subscribes to its outputs, and gets and sets its parameters through the node's
parameter services (rcl_interfaces/srv/GetParameters and SetParameters, what `ros2 param get` and
`ros2 param set` call). Prints "ready" once its endpoints exist; when its checks are done it
writes the file DONE (the test then stops morc with Ctrl-C) and waits for the node to leave the
graph; then prints its findings as JSON on one line.

Scenarios:
  feedthrough2  FMI 2 co-simulation, wall clock: outputs equal inputs (Real, Integer, Boolean),
                a tunable parameter changes scaled.y, a fixed one and step_size are refused, an
                input ramp between stamped samples is integrated as the interpolation says.
  feedthrough3  FMI 3 co-simulation, virtual clock: every integer type on Int32 or Int64, the
                fixed parameter `offset` given at start, refused while running.
  me            FMI 2 and FMI 3 model exchange, two nodes: dinput2 (der(x) = n + u, m = n) and
                bounce3 (a ball; its tunable restitution e set while it runs).

usage: ros_fmu_peer.py SCENARIO TIMEOUT_S DONE
"""
import json
import sys
import time

import rclpy
from rclpy.parameter import Parameter
from rcl_interfaces.srv import GetParameters, SetParameters
from std_msgs.msg import Bool, Float64, Int32, Int64

TYPES = {"Float64": Float64, "Int32": Int32, "Int64": Int64, "Bool": Bool}


class Peer:
    def __init__(self, timeout):
        rclpy.init()
        self.node = rclpy.create_node("morc_fmu_peer")
        self.end = time.monotonic() + timeout
        self.latest = {}
        self.pubs = {}
        self.errors = []

    def left(self):
        return max(0.0, self.end - time.monotonic())

    def subscribe(self, topic, ty):
        def on(m, topic=topic):
            self.latest[topic] = (m.data, time.monotonic())
        self.node.create_subscription(TYPES[ty], topic, on, 10)

    def publisher(self, topic, ty):
        self.pubs[topic] = (self.node.create_publisher(TYPES[ty], topic, 10), TYPES[ty])

    def publish(self, topic, value):
        pub, ty = self.pubs[topic]
        m = ty()
        m.data = value
        pub.publish(m)
        return time.monotonic()

    def spin(self, seconds):
        end = min(time.monotonic() + seconds, self.end)
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def wait_for(self, what, condition, seconds=None):
        """Spins until condition() holds; records a failure and returns False on timeout."""
        end = self.end if seconds is None else min(self.end, time.monotonic() + seconds)
        while time.monotonic() < end:
            if condition():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.01)
        if condition():
            return True
        self.errors.append("timed out waiting for " + what)
        return False

    def value(self, topic):
        return self.latest.get(topic, (None, 0))[0]

    def matched(self):
        return all(p.get_subscription_count() > 0 for p, _ in self.pubs.values())

    def call(self, client, request):
        if not client.wait_for_service(timeout_sec=self.left()):
            self.errors.append("no service " + client.srv_name)
            return None
        future = client.call_async(request)
        end = self.end
        while not future.done() and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)
        if not future.done():
            self.errors.append("no answer from " + client.srv_name)
            return None
        return future.result()

    def set_param(self, node, name, value):
        """As `ros2 param set NODE NAME VALUE`: (successful, reason)."""
        client = self.setters.setdefault(node, self.node.create_client(SetParameters, node + "/set_parameters"))
        request = SetParameters.Request()
        request.parameters = [Parameter(name, value=value).to_parameter_msg()]
        answer = self.call(client, request)
        if answer is None:
            return (None, "no answer")
        return (answer.results[0].successful, answer.results[0].reason)

    def get_params(self, node, names):
        """As `ros2 param get`: {name: value or None}."""
        client = self.getters.setdefault(node, self.node.create_client(GetParameters, node + "/get_parameters"))
        request = GetParameters.Request()
        request.names = names
        answer = self.call(client, request)
        if answer is None:
            return {}
        out = {}
        for name, v in zip(names, answer.values):
            out[name] = {1: v.bool_value, 2: v.integer_value, 3: v.double_value, 4: v.string_value}.get(v.type)
        return out

    def node_names(self):
        return ["/".join(filter(None, [ns.strip("/"), n])) for n, ns in self.node.get_node_names_and_namespaces()]

    def topics(self):
        return {name: types for name, types in self.node.get_topic_names_and_types()}

    setters = {}
    getters = {}


def feedthrough2(p, out):
    node = "/feedthrough2"
    inputs = {"/Float64_continuous_input": "Float64", "/Float64_discrete_input": "Float64", "/Int32_input": "Int32", "/Boolean_input": "Bool"}
    outputs = {"/Float64_continuous_output": "Float64", "/Float64_discrete_output": "Float64", "/Int32_output": "Int32", "/Boolean_output": "Bool", "/scaled_y": "Float64", "/integral": "Float64"}
    for t, ty in inputs.items():
        p.publisher(t, ty)
    for t, ty in outputs.items():
        p.subscribe(t, ty)
    print("ready", flush=True)
    if not p.wait_for("every output", lambda: all(t in p.latest for t in outputs)) or not p.wait_for("the node's subscriptions", p.matched):
        return
    out["first"] = {t: p.value(t) for t in outputs}
    out["parameters"] = p.get_params(node, ["step_size", "update_period", "Float64_fixed_parameter", "Float64_tunable_parameter", "String_parameter"])
    out["topics"] = {t: p.topics().get(t) for t in list(inputs) + list(outputs)}

    sent = {"/Float64_continuous_input": 1.25, "/Float64_discrete_input": -3.5, "/Int32_input": 42, "/Boolean_input": True}
    for t, v in sent.items():
        p.publish(t, v)
    echoed = {"/Float64_continuous_output": 1.25, "/Float64_discrete_output": -3.5, "/Int32_output": 42, "/Boolean_output": True}
    p.wait_for("the outputs to echo the inputs", lambda: all(p.value(t) == v for t, v in echoed.items()))
    out["echo"] = {t: p.value(t) for t in echoed}

    # A tunable parameter, as `ros2 param set /feedthrough2 Float64_tunable_parameter 2.0`.
    out["set_tunable"] = p.set_param(node, "Float64_tunable_parameter", 2.0)
    p.wait_for("scaled.y to follow the parameter", lambda: p.value("/scaled_y") == 2.0 * 1.25 + 0.5, 10)
    out["scaled_y"] = p.value("/scaled_y")
    out["set_fixed"] = p.set_param(node, "Float64_fixed_parameter", 1.0)
    out["set_step_size"] = p.set_param(node, "step_size", 0.5)
    out["set_wrong_type"] = p.set_param(node, "Float64_tunable_parameter", 3)
    out["after_sets"] = p.get_params(node, ["Float64_fixed_parameter", "Float64_tunable_parameter", "step_size"])

    # Interpolation: the continuous input at 0, and the node stepped past it.
    p.publish("/Float64_continuous_input", 0.0)
    p.wait_for("the input at 0", lambda: p.value("/Float64_continuous_output") == 0.0)
    p.spin(0.3)
    # A long update period: the samples below all come before the next update, so its steps see
    # the whole ramp 0 → 2 → 0 between their stamps.
    out["set_slow"] = p.set_param(node, "update_period", 60.0)
    p.spin(0.2)
    before = p.value("/integral")
    t_a = p.publish("/Float64_continuous_input", 0.0)
    p.spin(1.0)
    t_b = p.publish("/Float64_continuous_input", 2.0)
    p.spin(0.5)
    t_c = p.publish("/Float64_continuous_input", 0.0)
    p.spin(0.2)
    unchanged = p.value("/integral") == before
    out["set_fast"] = p.set_param(node, "update_period", 0.01)
    p.spin(1.0)
    after = p.value("/integral")
    out["interpolation"] = {
        "integral_gain": after - before,
        "trapezoid": (t_b - t_a) * (0.0 + 2.0) / 2 + (t_c - t_b) * (2.0 + 0.0) / 2,
        "held": (t_c - t_b) * 2.0,
        "quiet_while_slow": unchanged,
    }


def feedthrough3(p, out):
    node = "/feedthrough3"
    ints = {"i8": ("Int32", -7), "u8": ("Int32", 200), "i16": ("Int32", 100), "u16": ("Int32", 60000), "i32": ("Int32", -2000000000),
            "u32": ("Int64", 4000000000), "i64": ("Int64", -(2 ** 40)), "u64": ("Int64", 2 ** 50), "enum": ("Int64", 3)}
    inputs = {"/f32_in": ("Float64", 1.5), "/b_in": ("Bool", True)}
    inputs.update({"/%s_in" % k: v for k, v in ints.items()})
    for t, (ty, _) in inputs.items():
        p.publisher(t, ty)
        p.subscribe(t.replace("_in", "_out"), ty)
    print("ready", flush=True)
    if not p.wait_for("every output", lambda: all(t.replace("_in", "_out") in p.latest for t in inputs)) or not p.wait_for("the node's subscriptions", p.matched):
        return
    out["topics"] = {t: p.topics().get(t) for t in list(inputs) + [t.replace("_in", "_out") for t in inputs]}
    for t, (_, v) in inputs.items():
        p.publish(t, v)
    want = {t.replace("_in", "_out"): v for t, (_, v) in inputs.items()}
    want["/i16_out"] = 100 + 5  # offset = 5, given at start
    want["/b_out"] = False  # feedthrough3.c negates its Boolean
    p.wait_for("the outputs to echo the inputs", lambda: all(p.value(t) == v for t, v in want.items()))
    out["echo"] = {t: p.value(t) for t in want}
    out["want"] = want
    out["parameters"] = p.get_params(node, ["offset", "gain", "step_size"])
    out["set_fixed"] = p.set_param(node, "offset", 1)


def me(p, out):
    p.publisher("/u", "Float64")
    p.publisher("/n", "Int32")
    p.subscribe("/x", "Float64")
    p.subscribe("/m", "Int32")
    p.subscribe("/h", "Float64")
    p.subscribe("/v", "Float64")
    xs = []
    p.node.create_subscription(Float64, "/x", lambda m: xs.append(m.data), 1000)
    print("ready", flush=True)
    if not p.wait_for("dinput2 and bounce3's outputs", lambda: all(t in p.latest for t in ["/x", "/m", "/h", "/v"])) or not p.wait_for("the node's subscriptions", p.matched):
        return
    out["topics"] = {t: p.topics().get(t) for t in ["/u", "/n", "/x", "/m", "/h", "/v"]}
    p.publish("/n", 3)
    p.publish("/u", 0.5)
    p.wait_for("m to follow n", lambda: p.value("/m") == 3)
    x0 = p.value("/x")
    del xs[:]
    p.spin(1.0)
    out["dinput2"] = {"m": p.value("/m"), "x_gain": p.value("/x") - x0, "x_never_decreasing": all(b >= a for a, b in zip(xs, xs[1:])), "x_samples": len(xs)}
    out["bounce3_before"] = p.get_params("/bounce3", ["e", "g"])
    out["set_e"] = p.set_param("/bounce3", "e", 0.5)
    out["set_g"] = p.set_param("/bounce3", "g", -1.0)
    out["bounce3_after"] = p.get_params("/bounce3", ["e", "g"])
    hs = []
    p.node.create_subscription(Float64, "/h", lambda m: hs.append(m.data), 1000)
    p.spin(0.5)
    out["h"] = {"min": min(hs) if hs else None, "max": max(hs) if hs else None, "count": len(hs)}


def main(scenario, timeout, done):
    p = Peer(timeout)
    out = {"scenario": scenario}
    {"feedthrough2": feedthrough2, "feedthrough3": feedthrough3, "me": me}[scenario](p, out)
    out["nodes_while_running"] = p.node_names()
    out["errors"] = p.errors
    with open(done, "w") as f:
        f.write("done\n")
    # Ctrl-C now ends the node(s): they leave the graph.
    theirs = [n for n in out["nodes_while_running"] if n != "morc_fmu_peer" and not n.startswith("_")]
    gone = p.wait_for("the node to leave the graph", lambda: not any(n in p.node_names() for n in theirs), 30)
    out["left_graph"] = gone
    print(json.dumps(out), flush=True)
    p.node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
