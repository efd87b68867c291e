-- A library whose component kind uses its module's locals and a helper module of the library,
-- for tests/lua/rt_components.lua: it runs on the engine's thread, loaded there by module name.
return {
  name = "rtlib",
  version = "1.0.0",
  morc = ">=0.1",
  depends = {},
  doc = "A first-order smoother written with module locals and a library helper.",
}
