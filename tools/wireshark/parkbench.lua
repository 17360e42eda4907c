-- Wireshark dissector for parkbench captures (docs/capture.md): the 12-byte
-- record header of every packet, then what the record holds: serial wire
-- bytes (COBS, CRC-16, the link type and the frame inside), BLE chunks,
-- MQTT messages (topic and JSON), command and response frames of the box
-- protocol (docs/protocol.md), and opened records.
--
-- Use: copy this file to ~/.local/lib/wireshark/plugins/, or
--   wireshark -X lua_script:tools/wireshark/parkbench.lua capture.pcapng
--   tshark -X lua_script:tools/wireshark/parkbench.lua -r capture.pcapng
-- Every length is checked before it is read: a truncated or hostile record
-- is shown as malformed, never as a Lua error.

local bitops = bit32 or bit

local parkbench = Proto("parkbench", "Parkbench box protocol capture")

-- docs/capture.md, Record header
local RECORD_VERSION = 1
local RECORD_HEADER_LENGTH = 12
-- docs/protocol.md, Command frame, Response frame, Sizes
local COMMAND_HEADER_LENGTH = 22
local TAG_LENGTH = 8
local SIGNATURE_LENGTH = 64
local RESPONSE_LENGTH = 32
local ACCESS_FIXED_BODY_LENGTH = 11
local MAX_LINK_ENCODED_LENGTH = 229

local KIND_ACCESS = 1
local KIND_BATTERY_QUERY = 2
local KIND_TIME_SET = 3
local KIND_ACCESS_SIGNED = 4
local KIND_REVOKE = 5
local KIND_SET_ISSUER = 6

local LINK_TYPE_COMMAND = 0x01
local LINK_TYPE_STATUS_REQUEST = 0x02
local LINK_TYPE_RESPONSE = 0x81
local LINK_TYPE_STATUS_REPORT = 0x82

local RECORD_WIRE = 1
local RECORD_CHUNK = 2
local RECORD_MESSAGE = 3
local RECORD_FRAME = 4
local RECORD_OPENED = 5

local TO_BOX = 1
local FROM_BOX = 2

local FLAG_NOT_A_FRAME = 0x01
local FLAG_MODULE_ID_KNOWN = 0x02

local link_names = { [1] = "serial", [2] = "BLE", [3] = "MQTT" }
local direction_names = { [TO_BOX] = "to the box", [FROM_BOX] = "from the box" }
local record_names = {
  [RECORD_WIRE] = "wire bytes",
  [RECORD_CHUNK] = "BLE chunk",
  [RECORD_MESSAGE] = "MQTT message",
  [RECORD_FRAME] = "frame",
  [RECORD_OPENED] = "opened",
}
local kind_names = {
  [0] = "none (not parsed)",
  [KIND_ACCESS] = "ACCESS",
  [KIND_BATTERY_QUERY] = "BATTERY_QUERY",
  [KIND_TIME_SET] = "TIME_SET",
  [KIND_ACCESS_SIGNED] = "ACCESS_SIGNED",
  [KIND_REVOKE] = "REVOKE",
  [KIND_SET_ISSUER] = "SET_ISSUER",
}
local status_names = {
  [0x00] = "OK",
  [0x10] = "NOT_YET_VALID",
  [0x11] = "EXPIRED",
  [0x12] = "NO_TRIES_LEFT",
  [0x13] = "WRONG_MODULE",
  [0x14] = "WRONG_PARKING",
  [0x15] = "REPLAY",
  [0x16] = "REVOKED",
  [0x20] = "AUTH_FAILED",
  [0x21] = "MALFORMED",
  [0x22] = "UNSUPPORTED_VERSION",
  [0x30] = "BARRIER_FAULT",
  [0x31] = "LOW_BATTERY",
  [0x32] = "REVOCATION_FULL",
}
local barrier_names = { [0] = "CLOSED", [1] = "OPENING", [2] = "OPEN", [3] = "CLOSING", [4] = "FAULT" }
local box_direction_names = { [0] = "control", [1] = "entrance", [2] = "exit" }
local link_type_names = {
  [LINK_TYPE_COMMAND] = "command",
  [LINK_TYPE_STATUS_REQUEST] = "status request",
  [LINK_TYPE_RESPONSE] = "response",
  [LINK_TYPE_STATUS_REPORT] = "status report",
}
local command_outcome_names = { [0] = "opened", [1] = "not verified", [2] = "verified, body malformed" }
local remaining_names = { [0xff] = "not applicable" }

local f = {
  -- subtrees
  record_header = ProtoField.none("parkbench.header", "Record header"),
  wire = ProtoField.none("parkbench.wire", "Serial wire bytes"),
  link_frame = ProtoField.none("parkbench.link_frame", "Link frame (COBS decoded)"),
  command = ProtoField.none("parkbench.command", "Command frame"),
  response = ProtoField.none("parkbench.response", "Response frame"),
  chunk = ProtoField.none("parkbench.chunk", "BLE chunk"),
  message = ProtoField.none("parkbench.message", "MQTT message"),
  opened = ProtoField.none("parkbench.opened", "Opened"),
  revoke_entry = ProtoField.none("parkbench.revoke.entry", "Revoke entry"),
  -- record header
  record_version = ProtoField.uint8("parkbench.record_version", "Record version", base.DEC),
  header_length = ProtoField.uint8("parkbench.header_length", "Header length", base.DEC),
  link = ProtoField.uint8("parkbench.link", "Link", base.DEC, link_names),
  direction = ProtoField.uint8("parkbench.direction", "Direction", base.DEC, direction_names),
  record = ProtoField.uint8("parkbench.record", "Record", base.DEC, record_names),
  flags = ProtoField.uint8("parkbench.flags", "Flags", base.HEX),
  flag_not_a_frame = ProtoField.bool("parkbench.flags.not_a_frame", "Not a frame", 8, nil, FLAG_NOT_A_FRAME),
  flag_module_id_known = ProtoField.bool(
    "parkbench.flags.module_id_known",
    "Module id known",
    8,
    nil,
    FLAG_MODULE_ID_KNOWN
  ),
  reserved = ProtoField.uint16("parkbench.reserved", "Reserved", base.HEX),
  module_id = ProtoField.uint32("parkbench.module_id", "Module id", base.DEC),
  data = ProtoField.bytes("parkbench.data", "Data"),
  -- serial wire bytes
  encoded = ProtoField.bytes("parkbench.encoded", "COBS-encoded bytes"),
  delimiter = ProtoField.uint8("parkbench.delimiter", "Delimiter", base.HEX),
  link_type = ProtoField.uint8("parkbench.link_type", "Link type", base.HEX, link_type_names),
  payload = ProtoField.bytes("parkbench.payload", "Payload"),
  crc = ProtoField.uint16("parkbench.crc", "CRC-16/CCITT-FALSE", base.HEX),
  crc_computed = ProtoField.uint16("parkbench.crc.computed", "Computed CRC", base.HEX),
  crc_ok = ProtoField.bool("parkbench.crc_ok", "CRC correct"),
  not_a_frame = ProtoField.string("parkbench.not_a_frame", "Not a frame"),
  -- BLE chunk
  chunk_header = ProtoField.uint8("parkbench.chunk.header", "Chunk header", base.HEX),
  chunk_last = ProtoField.bool("parkbench.chunk.last", "Last chunk", 8, nil, 0x80),
  chunk_counter = ProtoField.uint8("parkbench.chunk.counter", "Chunk counter", base.DEC, nil, 0x7f),
  chunk_data = ProtoField.bytes("parkbench.chunk.data", "Chunk data"),
  -- MQTT message
  topic_length = ProtoField.uint16("parkbench.topic_length", "Topic length", base.DEC),
  topic = ProtoField.string("parkbench.topic", "Topic"),
  message_payload = ProtoField.bytes("parkbench.message_payload", "Message payload"),
  -- command frame
  version = ProtoField.uint8("parkbench.version", "Version", base.HEX),
  kind = ProtoField.uint8("parkbench.kind", "Kind", base.HEX, kind_names),
  key_id = ProtoField.uint32("parkbench.key_id", "Key id", base.DEC),
  scope = ProtoField.uint32("parkbench.scope", "Scope", base.DEC),
  nonce = ProtoField.bytes("parkbench.nonce", "Nonce"),
  ciphertext = ProtoField.bytes("parkbench.ciphertext", "Ciphertext"),
  tag = ProtoField.bytes("parkbench.tag", "Tag"),
  body = ProtoField.bytes("parkbench.body", "Body (in the clear)"),
  signature = ProtoField.bytes("parkbench.signature", "Signature (r || s)"),
  -- response frame
  status = ProtoField.uint8("parkbench.status", "Status", base.HEX, status_names),
  box_seq = ProtoField.uint32("parkbench.box_seq", "Box seq", base.DEC),
  box_time = ProtoField.uint32("parkbench.box_time", "Box time", base.DEC),
  battery_mv = ProtoField.uint16("parkbench.battery_mv", "Battery (mV)", base.DEC),
  barrier = ProtoField.uint8("parkbench.barrier", "Barrier", base.DEC, barrier_names),
  box_direction = ProtoField.uint8("parkbench.box_direction", "Direction of the box", base.DEC, box_direction_names),
  remaining = ProtoField.uint8("parkbench.remaining", "Remaining tries", base.DEC, remaining_names),
  -- bodies (ACCESS_SIGNED in the clear; opened records)
  not_before = ProtoField.uint32("parkbench.not_before", "Not before", base.DEC),
  not_after = ProtoField.uint32("parkbench.not_after", "Not after", base.DEC),
  max_entries = ProtoField.uint8("parkbench.max_entries", "Max entries", base.DEC),
  max_exits = ProtoField.uint8("parkbench.max_exits", "Max exits", base.DEC),
  module_count = ProtoField.uint8("parkbench.module_count", "Module count", base.DEC),
  module = ProtoField.uint32("parkbench.module", "Module", base.DEC),
  time = ProtoField.uint32("parkbench.time", "Time", base.DEC),
  revoke_count = ProtoField.uint8("parkbench.revoke.count", "Count", base.DEC),
  revoke_key_id = ProtoField.uint32("parkbench.revoke.key_id", "Key id", base.DEC),
  revoke_until = ProtoField.uint32("parkbench.revoke.until", "Until", base.DEC),
  issuer_key_fingerprint = ProtoField.bytes("parkbench.issuer_key_fingerprint", "Issuer key fingerprint"),
  issuer_key_previous_fingerprint = ProtoField.bytes(
    "parkbench.issuer_key_previous_fingerprint",
    "Previous issuer key fingerprint"
  ),
  -- opened record
  opened_outcome = ProtoField.uint8("parkbench.opened.outcome", "Outcome", base.DEC, command_outcome_names),
  opened_tag_verified = ProtoField.bool("parkbench.opened.tag_verified", "Tag verified"),
}

local field_list = {}
for _, field in pairs(f) do
  field_list[#field_list + 1] = field
end
parkbench.fields = field_list

local e = {
  malformed = ProtoExpert.new("parkbench.malformed", "Malformed", expert.group.MALFORMED, expert.severity.ERROR),
  bad_crc = ProtoExpert.new("parkbench.bad_crc", "Bad CRC", expert.group.CHECKSUM, expert.severity.ERROR),
  bad_cobs = ProtoExpert.new("parkbench.bad_cobs", "Bad COBS run", expert.group.MALFORMED, expert.severity.ERROR),
  not_a_frame = ProtoExpert.new("parkbench.not_a_frame.expert", "Not a frame", expert.group.PROTOCOL, expert.severity.WARN),
  refused = ProtoExpert.new("parkbench.refused", "Refused", expert.group.RESPONSE_CODE, expert.severity.NOTE),
  not_verified = ProtoExpert.new(
    "parkbench.not_verified",
    "Not verified",
    expert.group.SECURITY,
    expert.severity.WARN
  ),
}
parkbench.experts = { e.malformed, e.bad_crc, e.bad_cobs, e.not_a_frame, e.refused, e.not_verified }

local json_dissector = Dissector.get("json")

-- Helpers -----------------------------------------------------------------

local function name_of(names, value)
  return names[value] or string.format("unknown (0x%02x)", value)
end

local function utc(seconds)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", seconds)
end

local function add_time(tree, field, range)
  local item = tree:add(field, range)
  item:append_text(" (" .. utc(range:uint()) .. ")")
  return range:uint()
end

-- Adds what is left of `tvb` from `offset` when a frame ends early.
local function malformed(tree, tvb, offset, text)
  local item
  if offset < tvb:len() then
    item = tree:add(f.data, tvb(offset))
  else
    item = tree
  end
  item:add_proto_expert_info(e.malformed, text)
end

-- Whether `length` bytes from `offset` are in `tvb`; says what is missing when not.
local function need(tree, tvb, offset, length, what)
  if offset + length <= tvb:len() then
    return true
  end
  malformed(tree, tvb, offset, string.format("%s: %d bytes needed, %d left", what, length, tvb:len() - offset))
  return false
end

-- docs/protocol.md, Serial link framing: CRC-16/CCITT-FALSE over bytes
-- [0, count) of a ByteArray.
local function crc16(bytes, count)
  local crc = 0xffff
  for i = 0, count - 1 do
    crc = bitops.bxor(crc, bitops.lshift(bytes:get_index(i), 8))
    for _ = 1, 8 do
      if bitops.band(crc, 0x8000) ~= 0 then
        crc = bitops.band(bitops.bxor(bitops.lshift(crc, 1), 0x1021), 0xffff)
      else
        crc = bitops.band(bitops.lshift(crc, 1), 0xffff)
      end
    end
  end
  return crc
end

-- COBS decoding of a ByteArray's bytes [0, count); nil when a code runs past
-- the end or a 0x00 is inside.
local function cobs_decode(encoded, count)
  local out = {}
  local read = 0
  while read < count do
    local code = encoded:get_index(read)
    if code == 0 then
      return nil
    end
    read = read + 1
    local block_end = read + code - 1
    if block_end > count then
      return nil
    end
    while read < block_end do
      local byte = encoded:get_index(read)
      if byte == 0 then
        return nil
      end
      out[#out + 1] = byte
      read = read + 1
    end
    if code ~= 0xff and read < count then
      out[#out + 1] = 0
    end
  end
  local decoded = ByteArray.new()
  decoded:set_size(#out)
  for i, byte in ipairs(out) do
    decoded:set_index(i - 1, byte)
  end
  return decoded
end

-- What a frame says, for the Info column.
local function box_text(module_id)
  if module_id == nil then
    return ""
  end
  return " box " .. module_id
end

local function is_access_kind(kind)
  return kind == KIND_ACCESS or kind == KIND_ACCESS_SIGNED
end

-- key_id is the smart key id for access kinds, the control sequence for the others.
local function key_text(kind, key_id)
  if is_access_kind(kind) then
    return " key " .. key_id
  end
  return " control " .. key_id
end

-- Frames ------------------------------------------------------------------

-- docs/protocol.md, Command frame: the ACCESS body (ACCESS_SIGNED carries it in the clear).
local function dissect_access_body(tree, tvb, offset, length)
  local stop = offset + length
  if not need(tree, tvb, offset, ACCESS_FIXED_BODY_LENGTH, "ACCESS body") or length < ACCESS_FIXED_BODY_LENGTH then
    return nil
  end
  local text = {}
  add_time(tree, f.not_before, tvb(offset, 4))
  add_time(tree, f.not_after, tvb(offset + 4, 4))
  tree:add(f.max_entries, tvb(offset + 8, 1))
  tree:add(f.max_exits, tvb(offset + 9, 1))
  tree:add(f.module_count, tvb(offset + 10, 1))
  local count = tvb(offset + 10, 1):uint()
  local at = offset + ACCESS_FIXED_BODY_LENGTH
  for _ = 1, count do
    if at + 4 > stop then
      malformed(tree, tvb, at, string.format("module_count is %d: the body ends before the module list", count))
      return text
    end
    tree:add(f.module, tvb(at, 4))
    text[#text + 1] = tostring(tvb(at, 4):uint())
    at = at + 4
  end
  if count < 1 or count > 32 then
    tree:add_proto_expert_info(e.malformed, string.format("module_count %d is not 1..32", count))
  end
  if at < stop then
    malformed(tree, tvb(0, stop), at, string.format("%d bytes after the module list", stop - at))
  end
  return text
end

-- docs/protocol.md, Command frame. Returns the Info text.
local function dissect_command(tree, tvb, module_id)
  local length = tvb:len()
  local subtree = tree:add(f.command, tvb())
  if length == 0 then
    subtree:add_proto_expert_info(e.malformed, "empty command frame")
    return " empty command"
  end
  subtree:add(f.version, tvb(0, 1))
  local version = tvb(0, 1):uint()
  if not need(subtree, tvb, 1, COMMAND_HEADER_LENGTH - 1, "command header") then
    return " command, " .. length .. " bytes (too short)"
  end
  subtree:add(f.kind, tvb(1, 1))
  subtree:add(f.key_id, tvb(2, 4))
  subtree:add(f.scope, tvb(6, 4))
  subtree:add(f.nonce, tvb(10, 12))
  local kind = tvb(1, 1):uint()
  local key_id = tvb(2, 4):uint()
  local scope = tvb(6, 4):uint()
  if version ~= 1 then
    subtree:add_proto_expert_info(e.malformed, string.format("version 0x%02x is not 0x01", version))
  end
  local where = module_id
  if where == nil and not is_access_kind(kind) then
    where = scope
  end
  local info = box_text(where)
  if where == nil then
    info = " parking " .. scope
  end
  info = info .. " " .. name_of(kind_names, kind) .. key_text(kind, key_id)
  subtree:append_text(": " .. name_of(kind_names, kind) .. key_text(kind, key_id) .. ", scope " .. scope)
  if kind_names[kind] == nil or kind == 0 then
    malformed(subtree, tvb, COMMAND_HEADER_LENGTH, string.format("kind 0x%02x is none of the six", kind))
    return info
  end
  if kind == KIND_ACCESS_SIGNED then
    if not need(subtree, tvb, COMMAND_HEADER_LENGTH, SIGNATURE_LENGTH, "ACCESS_SIGNED signature") then
      return info .. " (too short)"
    end
    local body_length = length - COMMAND_HEADER_LENGTH - SIGNATURE_LENGTH
    if body_length > 0 then
      local body = subtree:add(f.body, tvb(COMMAND_HEADER_LENGTH, body_length))
      dissect_access_body(body, tvb, COMMAND_HEADER_LENGTH, body_length)
    else
      subtree:add_proto_expert_info(e.malformed, "ACCESS_SIGNED without a body")
    end
    subtree:add(f.signature, tvb(length - SIGNATURE_LENGTH, SIGNATURE_LENGTH))
    return info
  end
  if not need(subtree, tvb, COMMAND_HEADER_LENGTH, TAG_LENGTH, "CCM tag") then
    return info .. " (too short)"
  end
  local ciphertext_length = length - COMMAND_HEADER_LENGTH - TAG_LENGTH
  if ciphertext_length > 0 then
    subtree:add(f.ciphertext, tvb(COMMAND_HEADER_LENGTH, ciphertext_length))
  end
  subtree:add(f.tag, tvb(length - TAG_LENGTH, TAG_LENGTH))
  return info
end

-- docs/protocol.md, Response frame. Returns the Info text.
local function dissect_response(tree, tvb, is_status_report)
  local length = tvb:len()
  local subtree = tree:add(f.response, tvb())
  if is_status_report then
    subtree:set_text("Status report")
  end
  if length < RESPONSE_LENGTH then
    malformed(subtree, tvb, 0, string.format("a response has %d bytes, this one %d", RESPONSE_LENGTH, length))
    return " response, " .. length .. " bytes (too short)"
  end
  subtree:add(f.version, tvb(0, 1))
  subtree:add(f.status, tvb(1, 1))
  subtree:add(f.kind, tvb(2, 1))
  subtree:add(f.module_id, tvb(3, 4))
  subtree:add(f.key_id, tvb(7, 4))
  subtree:add(f.box_seq, tvb(11, 4))
  add_time(subtree, f.box_time, tvb(15, 4))
  subtree:add(f.battery_mv, tvb(19, 2))
  subtree:add(f.barrier, tvb(21, 1))
  subtree:add(f.box_direction, tvb(22, 1))
  subtree:add(f.remaining, tvb(23, 1))
  subtree:add(f.tag, tvb(24, TAG_LENGTH))
  if length > RESPONSE_LENGTH then
    malformed(subtree, tvb, RESPONSE_LENGTH, string.format("%d bytes after the response", length - RESPONSE_LENGTH))
  end
  local status = tvb(1, 1):uint()
  local kind = tvb(2, 1):uint()
  local key_id = tvb(7, 4):uint()
  local status_name = name_of(status_names, status)
  if status ~= 0 then
    subtree:add_proto_expert_info(e.refused, status_name)
  end
  local info = box_text(tvb(3, 4):uint())
  local seq = " seq " .. tvb(11, 4):uint()
  if kind == 0 and (is_status_report or status == 0) then
    info = info .. " status report " .. status_name .. seq .. " barrier " .. name_of(barrier_names, tvb(21, 1):uint())
  elseif kind == 0 then
    info = info .. " " .. status_name .. seq
  else
    info = info .. " " .. status_name .. " " .. name_of(kind_names, kind) .. key_text(kind, key_id) .. seq
  end
  local remaining = tvb(23, 1):uint()
  if remaining ~= 0xff then
    info = info .. " remaining " .. remaining
  end
  subtree:append_text(":" .. info)
  return info
end

local function dissect_frame(tree, tvb, direction, module_id, is_status_report)
  if direction == TO_BOX then
    return dissect_command(tree, tvb, module_id)
  end
  return dissect_response(tree, tvb, is_status_report)
end

-- Records ---------------------------------------------------------------

-- Why a run of wire bytes makes no frame, or nil and its decoded link frame.
local function decode_run(tree, data)
  local length = data:len()
  if length == 0 then
    return "empty"
  end
  local bytes = data:bytes()
  if bytes:get_index(length - 1) ~= 0 then
    if length > MAX_LINK_ENCODED_LENGTH then
      tree:add(f.encoded, data())
      return "too long, no delimiter"
    end
    tree:add(f.encoded, data())
    return "no delimiter"
  end
  local encoded_length = length - 1
  if encoded_length > 0 then
    tree:add(f.encoded, data(0, encoded_length))
  end
  tree:add(f.delimiter, data(encoded_length, 1))
  if encoded_length == 0 then
    return "lone delimiter"
  end
  if encoded_length > MAX_LINK_ENCODED_LENGTH then
    return string.format("too long (%d encoded bytes, at most %d)", encoded_length, MAX_LINK_ENCODED_LENGTH)
  end
  local decoded = cobs_decode(bytes, encoded_length)
  if decoded == nil then
    tree:add_proto_expert_info(e.bad_cobs)
    return "bad COBS"
  end
  return nil, decoded
end

-- docs/protocol.md, Serial link framing: the decoded link frame, type ||
-- payload || CRC. Returns why it makes no frame (nil when it does), and the
-- Info text of what it carries.
local function dissect_link_frame(tree, decoded, direction, module_id)
  local frame = decoded:tvb("Link frame")
  local length = frame:len()
  local link_frame = tree:add(f.link_frame, frame())
  if length < 3 then
    link_frame:add(f.data, frame())
    link_frame:add(f.crc_ok, frame(), false):set_generated()
    link_frame:add_proto_expert_info(e.bad_crc, "too short to hold a type and a CRC")
    return "bad CRC"
  end
  local type = frame(0, 1):uint()
  link_frame:add(f.link_type, frame(0, 1))
  local payload_length = length - 3
  if payload_length > 0 then
    link_frame:add(f.payload, frame(1, payload_length))
  end
  local crc_range = frame(length - 2, 2)
  local computed = crc16(decoded, length - 2)
  local crc_item = link_frame:add(f.crc, crc_range)
  link_frame:add(f.crc_ok, crc_range, crc_range:uint() == computed):set_generated()
  if crc_range:uint() ~= computed then
    crc_item:append_text(string.format(" [incorrect, should be 0x%04x]", computed))
    link_frame:add(f.crc_computed, crc_range, computed):set_generated()
    crc_item:add_proto_expert_info(e.bad_crc)
    return "bad CRC"
  end
  crc_item:append_text(" [correct]")
  if link_type_names[type] == nil then
    return string.format("undefined link type 0x%02x", type)
  end
  link_frame:append_text(": " .. link_type_names[type])
  if type == LINK_TYPE_STATUS_REQUEST then
    if payload_length > 0 then
      link_frame:add_proto_expert_info(e.malformed, "a status request has no payload")
    end
    return nil, box_text(module_id) .. " status request"
  end
  if payload_length == 0 then
    link_frame:add_proto_expert_info(e.malformed, "no frame in the link frame")
    return nil, box_text(module_id) .. " " .. link_type_names[type] .. " without a frame"
  end
  local payload = frame(1, payload_length):tvb()
  return nil, dissect_frame(link_frame, payload, direction, module_id, type == LINK_TYPE_STATUS_REPORT)
end

-- docs/capture.md, Records: one run of serial bytes, COBS and its 0x00 included.
local function dissect_wire(tree, data, direction, module_id, not_a_frame_flag)
  local subtree = tree:add(f.wire, data())
  local reason, decoded = decode_run(subtree, data)
  local info
  if reason == nil then
    reason, info = dissect_link_frame(subtree, decoded, direction, module_id)
  end
  if reason == nil and not_a_frame_flag then
    -- The recorder saw what came before these bytes: a run longer than a link frame may be.
    reason = "part of a longer run"
  end
  if reason == nil then
    return info
  end
  subtree:add(f.not_a_frame, data(), reason):set_generated()
  subtree:add_proto_expert_info(e.not_a_frame, "not a frame: " .. reason)
  subtree:append_text(": not a frame (" .. reason .. ")")
  return box_text(module_id) .. " not a frame (" .. reason .. ")"
end

-- docs/protocol.md, BLE link: header byte (bit 7 last, bits 0..6 counter) || data.
local function dissect_chunk(tree, data, module_id, not_a_frame_flag)
  local subtree = tree:add(f.chunk, data())
  if data:len() == 0 then
    subtree:add_proto_expert_info(e.malformed, "empty chunk: no header byte")
    return box_text(module_id) .. " empty chunk"
  end
  subtree:add(f.chunk_header, data(0, 1))
  subtree:add(f.chunk_last, data(0, 1))
  subtree:add(f.chunk_counter, data(0, 1))
  local data_length = data:len() - 1
  if data_length > 0 then
    subtree:add(f.chunk_data, data(1, data_length))
  end
  local header = data(0, 1):uint()
  local info = box_text(module_id) .. " chunk " .. bitops.band(header, 0x7f)
  if bitops.band(header, 0x80) ~= 0 then
    info = info .. " last"
  end
  info = info .. ", " .. data_length .. " bytes"
  if not_a_frame_flag then
    subtree:add_proto_expert_info(e.not_a_frame, "recorded as not a frame")
    info = info .. " (not a frame)"
  end
  return info
end

-- docs/capture.md, Records: topic length (u16) || topic || payload (JSON).
local function dissect_message(tree, data, pinfo, module_id)
  local subtree = tree:add(f.message, data())
  if not need(subtree, data, 0, 2, "topic length") then
    return box_text(module_id) .. " MQTT message (too short)"
  end
  subtree:add(f.topic_length, data(0, 2))
  local topic_length = data(0, 2):uint()
  if not need(subtree, data, 2, topic_length, "topic") then
    return box_text(module_id) .. " MQTT message (too short)"
  end
  local topic = ""
  if topic_length > 0 then
    subtree:add(f.topic, data(2, topic_length))
    topic = data(2, topic_length):string(ENC_UTF_8)
  end
  local payload_offset = 2 + topic_length
  local payload_length = data:len() - payload_offset
  if payload_length > 0 then
    subtree:add(f.message_payload, data(payload_offset, payload_length))
    if json_dissector ~= nil then
      json_dissector:call(data(payload_offset, payload_length):tvb(), pinfo, subtree)
    end
  end
  return box_text(module_id) .. " MQTT " .. topic .. ", " .. payload_length .. " bytes"
end

-- A few module ids in full; a longer list by its ends and count.
local function modules_text(modules)
  if #modules <= 4 then
    return table.concat(modules, ",")
  end
  return modules[1] .. ".." .. modules[#modules] .. " (" .. #modules .. ")"
end

-- docs/capture.md, Opened records: the body's fields of an opened command.
local function dissect_opened_body(tree, data, kind)
  local length = data:len() - 2
  if kind == KIND_ACCESS or kind == KIND_ACCESS_SIGNED then
    local modules = dissect_access_body(tree, data, 2, length)
    if modules == nil then
      return ""
    end
    return string.format(
      " %s..%s entries %d exits %d modules %s",
      utc(data(2, 4):uint()),
      utc(data(6, 4):uint()),
      data(10, 1):uint(),
      data(11, 1):uint(),
      modules_text(modules)
    )
  end
  if kind == KIND_BATTERY_QUERY then
    if length > 0 then
      malformed(tree, data, 2, "BATTERY_QUERY has no body fields")
    end
    return ""
  end
  if kind == KIND_TIME_SET then
    if not need(tree, data, 2, 4, "time") then
      return ""
    end
    add_time(tree, f.time, data(2, 4))
    if length > 4 then
      malformed(tree, data, 6, "bytes after the time")
    end
    return " time " .. utc(data(2, 4):uint())
  end
  if kind == KIND_REVOKE then
    if not need(tree, data, 2, 1, "count") then
      return ""
    end
    tree:add(f.revoke_count, data(2, 1))
    local count = data(2, 1):uint()
    local at = 3
    local keys = {}
    for i = 1, count do
      if not need(tree, data, at, 8, "revoke entry " .. i) then
        break
      end
      local entry = tree:add(f.revoke_entry, data(at, 8))
      entry:add(f.revoke_key_id, data(at, 4))
      add_time(entry, f.revoke_until, data(at + 4, 4))
      entry:append_text(" " .. i .. ": key " .. data(at, 4):uint() .. " until " .. utc(data(at + 4, 4):uint()))
      keys[#keys + 1] = tostring(data(at, 4):uint())
      at = at + 8
    end
    if at < data:len() then
      malformed(tree, data, at, "bytes after the entries")
    end
    return " keys " .. table.concat(keys, ",")
  end
  if kind == KIND_SET_ISSUER then
    if not need(tree, data, 2, 8, "fingerprints") then
      return ""
    end
    local current = tree:add(f.issuer_key_fingerprint, data(2, 4))
    current:append_text(" (sha256:" .. data(2, 4):bytes():tohex(true) .. ")")
    local previous = tree:add(f.issuer_key_previous_fingerprint, data(6, 4))
    local previous_text = "none"
    if data(6, 4):uint() ~= 0 then
      previous_text = "sha256:" .. data(6, 4):bytes():tohex(true)
    end
    previous:append_text(" (" .. previous_text .. ")")
    if length > 8 then
      malformed(tree, data, 10, "bytes after the fingerprints")
    end
    return " issuer sha256:" .. data(2, 4):bytes():tohex(true) .. " previous " .. previous_text
  end
  return ""
end

-- docs/capture.md, Opened records.
local function dissect_opened(tree, data, direction, module_id)
  local subtree = tree:add(f.opened, data())
  local prefix = box_text(module_id) .. " opened"
  if not need(subtree, data, 0, 2, "kind and outcome") then
    return prefix .. " (too short)"
  end
  subtree:add(f.kind, data(0, 1))
  local kind = data(0, 1):uint()
  local outcome = data(1, 1):uint()
  if direction == FROM_BOX then
    local verified = outcome == 0
    local text = verified and "tag verified" or "tag NOT verified"
    subtree:add(f.opened_outcome, data(1, 1), outcome, "Outcome: " .. text .. " (" .. outcome .. ")")
    subtree:add(f.opened_tag_verified, data(1, 1), verified):set_generated()
    if not verified then
      subtree:add_proto_expert_info(e.not_verified, "response tag not verified")
    end
    if outcome > 1 then
      subtree:add_proto_expert_info(e.malformed, "outcome of a response is 0 or 1")
    end
    if data:len() > 2 then
      malformed(subtree, data, 2, "bytes after the outcome")
    end
    local answered = name_of(kind_names, kind)
    subtree:append_text(": answer to " .. answered .. ", " .. text)
    return prefix .. " answer to " .. answered .. ": " .. text
  end
  subtree:add(f.opened_outcome, data(1, 1))
  local info = prefix .. " " .. name_of(kind_names, kind) .. ": " .. name_of(command_outcome_names, outcome)
  if outcome == 1 then
    subtree:add_proto_expert_info(e.not_verified, "not verified under any key the tool holds")
  end
  if outcome ~= 0 then
    if data:len() > 2 then
      malformed(subtree, data, 2, "an opened record of outcome " .. outcome .. " has no body")
    end
    subtree:append_text(": " .. name_of(kind_names, kind) .. ", " .. name_of(command_outcome_names, outcome))
    return info
  end
  local body = dissect_opened_body(subtree, data, kind)
  subtree:append_text(": " .. name_of(kind_names, kind) .. body)
  return info .. body
end

-- The record header --------------------------------------------------------

local function dissect_header(tree, tvb)
  local header = tree:add(f.record_header, tvb(0, RECORD_HEADER_LENGTH))
  header:add(f.record_version, tvb(0, 1))
  header:add(f.header_length, tvb(1, 1))
  header:add(f.link, tvb(2, 1))
  header:add(f.direction, tvb(3, 1))
  header:add(f.record, tvb(4, 1))
  local flags = header:add(f.flags, tvb(5, 1))
  flags:add(f.flag_not_a_frame, tvb(5, 1))
  flags:add(f.flag_module_id_known, tvb(5, 1))
  header:add(f.reserved, tvb(6, 2))
  local module_id = nil
  if bitops.band(tvb(5, 1):uint(), FLAG_MODULE_ID_KNOWN) ~= 0 then
    header:add(f.module_id, tvb(8, 4))
    module_id = tvb(8, 4):uint()
  end
  return header, module_id
end

local interface_name = Field.new("frame.interface_name")

-- Source and Destination: the box, and the link it is reached by (the interface's name).
local function set_ends(pinfo, direction, box)
  local names = { interface_name() }
  local link_end = "host"
  if #names > 0 then
    link_end = tostring(names[1].value)
  end
  if direction == TO_BOX then
    pinfo.cols.src:set(link_end)
    pinfo.cols.dst:set(box)
  else
    pinfo.cols.src:set(box)
    pinfo.cols.dst:set(link_end)
  end
end

local function arrow(direction)
  if direction == TO_BOX then
    return "→"
  end
  if direction == FROM_BOX then
    return "←"
  end
  return "?"
end

function parkbench.dissector(tvb, pinfo, tree)
  local length = tvb:len()
  pinfo.cols.protocol:set("Parkbench")
  local root = tree:add(parkbench, tvb(), "Parkbench capture record")
  if length < 1 or tvb(0, 1):uint() ~= RECORD_VERSION then
    local version = length >= 1 and string.format("version 0x%02x", tvb(0, 1):uint()) or "empty"
    malformed(root, tvb, 0, "not a parkbench record (" .. version .. ")")
    pinfo.cols.info:set("not a parkbench record (" .. version .. ")")
    return length
  end
  if length < RECORD_HEADER_LENGTH then
    malformed(root, tvb, 0, "record header cut short: " .. length .. " bytes")
    pinfo.cols.info:set("record header cut short")
    return length
  end
  local header, module_id = dissect_header(root, tvb)
  local header_length = tvb(1, 1):uint()
  local link = tvb(2, 1):uint()
  local direction = tvb(3, 1):uint()
  local record = tvb(4, 1):uint()
  local not_a_frame_flag = bitops.band(tvb(5, 1):uint(), FLAG_NOT_A_FRAME) ~= 0
  local problem = nil
  if header_length < RECORD_HEADER_LENGTH or header_length > length then
    problem = "header length " .. header_length
  elseif link_names[link] == nil then
    problem = "link " .. link
  elseif direction_names[direction] == nil then
    problem = "direction " .. direction
  elseif record_names[record] == nil then
    problem = "record " .. record
  end
  if problem ~= nil then
    header:add_proto_expert_info(e.malformed, "not a parkbench record: " .. problem)
    if RECORD_HEADER_LENGTH < length then
      root:add(f.data, tvb(RECORD_HEADER_LENGTH))
    end
    pinfo.cols.info:set("not a parkbench record (" .. problem .. ")")
    return length
  end
  local box = module_id == nil and "box" or "box " .. module_id
  header:append_text(
    ": " .. link_names[link] .. ", " .. direction_names[direction] .. ", " .. record_names[record] .. ", " .. box
  )
  if header_length == length then
    root:add_proto_expert_info(e.malformed, "a " .. record_names[record] .. " record without data")
    pinfo.cols.info:set(arrow(direction) .. box_text(module_id) .. " " .. record_names[record] .. " without data")
    return length
  end
  local data = tvb(header_length):tvb()
  local info
  if record == RECORD_WIRE then
    info = dissect_wire(root, data, direction, module_id, not_a_frame_flag)
  elseif record == RECORD_CHUNK then
    info = dissect_chunk(root, data, module_id, not_a_frame_flag)
  elseif record == RECORD_MESSAGE then
    info = dissect_message(root, data, pinfo, module_id)
  elseif record == RECORD_FRAME then
    info = dissect_frame(root, data, direction, module_id, false)
  else
    info = dissect_opened(root, data, direction, module_id)
  end
  local towards = direction == TO_BOX and "to " or "from "
  local what = record_names[record]
  if record ~= RECORD_CHUNK and record ~= RECORD_MESSAGE then
    -- "BLE chunk" and "MQTT message" name their link already.
    what = link_names[link] .. " " .. what
  end
  root:append_text(": " .. what .. ", " .. towards .. box)
  pinfo.cols.protocol:set("PB " .. link_names[link])
  pinfo.cols.info:set(arrow(direction) .. info)
  set_ends(pinfo, direction, box)
  return length
end

-- docs/capture.md: every interface of a parkbench capture has link type 147, LINKTYPE_USER0.
DissectorTable.get("wtap_encap"):add(wtap_encaps.USER0, parkbench)
