-- A real LSP client: Neovim's built-in one, headless. It starts tessera-lsp on a copy of an
-- example kernel, waits for diagnostics, hovers a parameter, jumps to a definition, completes
-- after `tile.`, types an error and waits for its diagnostic. Prints one PASS/FAIL line per
-- step and exits with status 1 if any step failed.
-- Usage: nvim --headless --clean -l client.lua  (0.9+)  or  nvim --headless --clean -u NONE -c "luafile client.lua"
-- Arguments come from the environment: TESSERA_LSP (the server), TESSERA_EXAMPLE (the file).
local server = os.getenv("TESSERA_LSP")
local file = os.getenv("TESSERA_EXAMPLE")
local failed = false
local function report(ok, what, detail)
  io.stdout:write((ok and "PASS " or "FAIL ") .. what .. (detail and (": " .. detail) or "") .. "\n")
  if not ok then failed = true end
end
local function finish()
  io.stdout:flush()
  vim.cmd(failed and "cquit 1" or "qall!")
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.bo[buf].filetype = "tessera"

local published = {}
local client_id = vim.lsp.start_client({
  name = "tessera",
  cmd = { server, "--debounce-ms=50" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      table.insert(published, result)
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
    end,
  },
})
report(client_id ~= nil, "start tessera-lsp")
if not client_id then finish() end
vim.lsp.buf_attach_client(buf, client_id)

local ok = vim.wait(10000, function() return #published > 0 end, 20)
report(ok, "diagnostics after open", ok and (#published[1].diagnostics .. " diagnostics") or "none received")

local uri = vim.uri_from_bufnr(buf)
local function request(method, line, character, extra)
  local params = { textDocument = { uri = uri }, position = { line = line, character = character } }
  for k, v in pairs(extra or {}) do params[k] = v end
  local replies = vim.lsp.buf_request_sync(buf, method, params, 10000)
  if not replies or not replies[client_id] then return nil, "no reply" end
  local r = replies[client_id]
  if r.err then return nil, vim.inspect(r.err) end
  return r.result
end

-- Hover on Q in `tile.range(Q, ...)` (line 4, 0-based 3): its type from sema.
local hover, herr = request("textDocument/hover", 3, 28)
local hv = hover and hover.contents and hover.contents.value or ""
report(hv:find("(parameter) Q: bf16[S, D]", 1, true) ~= nil, "hover shows the parameter's type", hv ~= "" and hv:gsub("\n", " ") or herr)

-- Definition of q_tile in `tile.dot(q_tile, ...)` (line 8, 0-based 7) -> its assignment on line 5.
local def, derr = request("textDocument/definition", 7, 27)
local loc = def and (def[1] or def)
report(loc ~= nil and loc.range ~= nil and loc.range.start.line == 4 and loc.range.start.character == 8,
  "definition of q_tile", loc and loc.range and vim.inspect(loc.range.start):gsub("%s+", " ") or derr)

-- Complete after `tile.` on a new line in the loop body.
vim.api.nvim_buf_set_lines(buf, 10, 10, false, { "        z = tile." })
vim.wait(200)
local comp, cerr = request("textDocument/completion", 10, 17)
local labels = {}
for _, item in ipairs((comp and (comp.items or comp)) or {}) do labels[item.label] = true end
report(labels["dot"] and labels["softmax"] and labels["cp_async"] and labels["linear_id"],
  "completion after tile.", comp and (#(comp.items or comp) .. " items") or cerr)

-- Type an undefined name and wait for its diagnostic (incremental sync from a real editor).
vim.api.nvim_buf_set_lines(buf, 10, 11, false, { "        z = undefined_thing" })
ok = vim.wait(10000, function()
  local last = published[#published]
  for _, d in ipairs(last.diagnostics) do
    if d.message:find("undefined_thing", 1, true) then return true end
  end
  return false
end, 20)
report(ok, "diagnostic after an edit")

vim.lsp.stop_client(client_id)
finish()
