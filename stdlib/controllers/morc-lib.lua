-- morc's own controllers as Lua library components (`morc.lib.load "controllers"`; the folder
-- stdlib/ is in the library path): each has a native Rust twin computing the same law, and
-- tests/controllers_twins.rs checks both agree to 1e-12 in the same run.
return {
  name = "controllers",
  version = "1.0.0",
  morc = ">=0.1",
  depends = {},
  -- A component given its robot by module name ("robots.ur5" rather than the robot) loads it
  -- (robots/*.lua read their URDF files).
  capabilities = { "io" },
  doc = "Joint P-PI cascade (controllers.ppi), Cartesian velocity law with a damped pseudo-inverse and a null-space term (controllers.cartesian_velocity) and the feed-forward of an arm with elastic gears (controllers.elastic_feed_forward), stepped on the engine's thread.",
}
