--- morc.testing — small helpers for Lua tests of morc and of skill libraries.
-- local T = require "morc.testing"
-- T.test("name", function() T.near(x, 1.0, 1e-9) end)
-- return T.summary()  -- runs nothing itself: tests run as they are declared

local T = { passed = 0, failed = 0, failures = {} }

local function where(level)
  local info = debug.getinfo(level + 1, "Sl")
  return info and ("%s:%d"):format(info.short_src, info.currentline) or "?"
end

--- Runs one named test; a failure is recorded with its message and traceback.
function T.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    T.passed = T.passed + 1
  else
    T.failed = T.failed + 1
    T.failures[#T.failures + 1] = ("%s: %s"):format(name, tostring(err))
  end
end

--- Fails unless fn raises an error whose message contains every plain-text pattern given.
function T.raises(fn, ...)
  local ok, err = pcall(fn)
  if ok then
    error(("%s: expected an error, none was raised"):format(where(2)), 2)
  end
  err = tostring(err)
  for _, p in ipairs({ ... }) do
    if not err:find(p, 1, true) then
      error(("%s: error message lacks %q:\n  %s"):format(where(2), p, err), 2)
    end
  end
  return err
end

--- Fails unless |a − b| ≤ tol (numbers, or lists of numbers element-wise).
function T.near(a, b, tol, what)
  tol = tol or 1e-12
  if type(a) == "table" then
    if #a ~= #b then error(("%s: %s length %d ≠ %d"):format(where(2), what or "", #a, #b), 2) end
    for i = 1, #a do
      if math.abs(a[i] - b[i]) > tol then
        error(("%s: %s[%d] = %.17g, expected %.17g ± %g"):format(where(2), what or "", i, a[i], b[i], tol), 2)
      end
    end
  elseif math.abs(a - b) > tol then
    error(("%s: %s = %.17g, expected %.17g ± %g"):format(where(2), what or "value", a, b, tol), 2)
  end
end

--- Fails unless a == b.
function T.eq(a, b, what)
  if a ~= b then
    error(("%s: %s = %s, expected %s"):format(where(2), what or "value", tostring(a), tostring(b)), 2)
  end
end

--- "N passed, M failed" and the failures, one per line.
function T.summary()
  local lines = { ("%d passed, %d failed"):format(T.passed, T.failed) }
  for _, f in ipairs(T.failures) do lines[#lines + 1] = f end
  return table.concat(lines, "\n"), T.failed == 0
end

if morc and morc.doc then
  morc.doc(T.test, "T.test(name: string, fn: function) — runs one named test; a failure is recorded with its message and traceback.")
  morc.doc(T.raises, "T.raises(fn: function, ...: string) → string — fails unless fn raises an error whose message contains every plain-text pattern; returns the message.")
  morc.doc(T.near, "T.near(a: number|number[], b: number|number[], tol: number, what?: string) — fails unless |a − b| ≤ tol (numbers, or lists of numbers element-wise).")
  morc.doc(T.eq, "T.eq(a: any, b: any, what?: string) — fails unless a == b.")
  morc.doc(T.summary, "T.summary() → string, boolean — \"N passed, M failed\" and the failures, one per line, and whether all passed: a test file returns it.")
end

return T
