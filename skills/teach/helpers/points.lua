-- Taught points: a list of whole-robot joint positions (degrees, mm for prismatic joints) with
-- names, kept in a file a person can read and edit:
--
--   # morc taught points: robot "dual-arm stacker", group left
--   # name, theta1 (deg), d2 (mm), theta3 (deg), d2r (mm), theta3r (deg)
--   P1, 90.000, 440.000, -60.000, 400.000, 60.000
--
-- Lines starting with # are comments; a point is a name and one number per joint.
local M = {}

--- Writes `points` (a list of joint vectors, or of { name =, q = }) of `robot` to `path`, or, when
--- that file exists, to the next free NAME-001.csv, NAME-002.csv … beside it (as every save in
--- morc: a person's edited file is never replaced). Returns the path written.
function M.save(points, path, robot, group)
  local lines = {
    ("# morc taught points: robot %q%s"):format(robot.name, group and (", group " .. group) or ""),
  }
  local head = {}
  for i, j in ipairs(robot.joints) do head[i] = ("%s (%s)"):format(j.name, j.unit) end
  lines[#lines + 1] = "# name, " .. table.concat(head, ", ")
  for k, p in ipairs(points) do
    local q = p.q or p
    local cells = { p.name or ("P" .. k) }
    for i = 1, robot.dof do cells[#cells + 1] = ("%.4f"):format(q[i]) end
    lines[#lines + 1] = table.concat(cells, ", ")
  end
  local ok, written = pcall(morc.write_new, path, table.concat(lines, "\n") .. "\n")
  if not ok then error(("teach: cannot write the points to %s: %s"):format(path, tostring(written)), 2) end
  return written
end

--- Reads the points of `path` for `robot`: a list of joint vectors, each with its name in
--- `.name` (p.name) as well as its joints p[1..dof]. A bad line is an error naming file:line.
function M.load(path, robot)
  local f, err = io.open(path, "r")
  if not f then error(("teach: cannot read points from %s: %s"):format(path, err), 2) end
  local points, line_no = {}, 0
  for line in f:lines() do
    line_no = line_no + 1
    if not line:match("^%s*#") and line:match("%S") then
      local cells = {}
      for cell in (line .. ","):gmatch("([^,]*),") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$") end
      if #cells ~= robot.dof + 1 then
        f:close()
        error(("%s:%d: a point is a name and %d numbers (one per joint of %s), this line has %d cells"):format(path, line_no, robot.dof, robot.name, #cells), 2)
      end
      local p = { name = cells[1] }
      for i = 1, robot.dof do
        p[i] = tonumber(cells[i + 1])
        if not p[i] then
          f:close()
          error(("%s:%d: %s of point %s is %q, not a number"):format(path, line_no, robot.joints[i].name, cells[1], cells[i + 1]), 2)
        end
      end
      local ok, why = robot:reachable(p)
      if not ok then
        f:close()
        error(("%s:%d: point %s: %s"):format(path, line_no, cells[1], why), 2)
      end
      points[#points + 1] = p
    end
  end
  f:close()
  return points
end

return M
