-- A library that adds a component kind (components/scale.lua), for tests/lua/kind_registry.lua.
return {
  name = "kindlib",
  version = "1.0.0",
  morc = ">=0.1",
  depends = {},
  doc = "Adds the component kind kindlib.scale, written in Lua.",
}
