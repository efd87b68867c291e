"""What morc's MCAP recordings hold, read with Foxglove's `mcap` library
(`make_reader(f).iter_messages()`) and decoded with rosbags' type system from
the ros2msg schemas in the file: one channel per component (/morc/<component>),
one message per recorded row, one field per recorded signal. The channel's
metadata names the signals ("signals", a JSON list) and each signal's field
("<signal>.field"), unit, type and so on.
"""
import json

from rosbags.typesys import Stores, get_typestore, get_types_from_msg


class Decoder:
    """Deserializes CDR messages by the schemas they come with."""

    def __init__(self):
        self.store = get_typestore(Stores.EMPTY)
        self.known = set()

    def decode(self, schema, data):
        if schema.name not in self.known:
            types = {k: v for k, v in get_types_from_msg(schema.data.decode(), schema.name).items() if k not in self.store.fielddefs}
            self.store.register(types)
            self.known.add(schema.name)
        return self.store.deserialize_cdr(data, schema.name)


def signals_of(channel):
    """The signals a component channel carries, in field order (none for other channels)."""
    if "signals" not in channel.metadata:
        return []
    return json.loads(channel.metadata["signals"])


def value(msg, channel, signal):
    """The sample of `signal` in the component message `msg`, as a number or a list."""
    v = getattr(msg, channel.metadata[f"{signal}.field"])
    return v.tolist() if hasattr(v, "tolist") else v
