import Std.Data.HashMap
import Lean.Data.Json
import Lar.Schema
import Lar.Verifier

/-
The `lar-verify` protocol (docs/lean.md): JSON Lines, one request per line, one
response per line. Sessions are multiplexed by the `session` field; each holds
one verifier state. `respond` is pure, so a bad request can only ever produce an
error response.
-/
namespace Lar.Protocol
open Lean

abbrev Sessions := Std.HashMap String State

def protocolVersion : Nat := 1

def okResponse (id result : Json) : Json :=
  Json.mkObj [("id", id), ("ok", toJson true), ("result", result)]

def errorResponse (id : Json) (msg : String) : Json :=
  Json.mkObj [("id", id), ("ok", toJson false), ("error", toJson msg)]

/-- Handles one request object; returns the result and the sessions after it. -/
def handle (sessions : Sessions) (req : Json) : Except String (Json × Sessions) := do
  Read.object "request" req
  let op ← Read.str "op" (← Read.req "request" req "op")
  if op == "hello" then
    return (Json.mkObj [("protocol", toJson protocolVersion), ("lar", toJson (1 : Nat)),
      ("checker", toJson "lar-verify"), ("sessions", toJson sessions.size)], sessions)
  let session ← Read.str "session" (← Read.req "request" req "session")
  if op == "load" then
    let wf ← Workflow.fromJson? (← Read.req "load" req "workflow")
    let headerLine ← Read.optD req "headerLine" 1 (Read.posNat "headerLine")
    let st ← State.create wf headerLine
    return (Json.mkObj [("session", toJson session)], sessions.insert session st)
  if op == "close" then
    return (Json.mkObj [("session", toJson session)], sessions.erase session)
  let some st := sessions[session]?
    | throw s!"no session \"{session}\": load a workflow first"
  if op == "append" then
    let line ← Read.posNat "line" (← Read.req "append" req "line")
    let event ← Event.fromJson? (← Read.req "append" req "event")
    let (st', result) := st.append line event
    return (toJson result, sessions.insert session st')
  if op == "gate" then
    let call ← ProposedCall.fromJson? (← Read.req "gate" req "call")
    return (toJson (st.gate call), sessions)
  if op == "summary" then
    return (st.summary, sessions)
  throw s!"unknown op \"{op}\" (expected hello, load, append, gate, summary or close)"

/-- One request line in, one response out. Never fails. -/
def respond (sessions : Sessions) (line : String) : Json × Sessions :=
  match Json.parse line with
  | .error e => (errorResponse Json.null s!"invalid JSON request: {e}", sessions)
  | .ok req =>
    let id := (field? req "id").getD Json.null
    match handle sessions req with
    | .ok (result, next) => (okResponse id result, next)
    | .error e => (errorResponse id e, sessions)

end Lar.Protocol
