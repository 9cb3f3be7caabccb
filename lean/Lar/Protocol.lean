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

/-- A request, read from its JSON. -/
inductive Request where
  | hello
  | load (session : String) (wf : Workflow) (headerLine : Nat) (sandbox : Option SandboxRecord)
  | close (session : String)
  | append (session : String) (line : Nat) (event : Event)
  | gate (session : String) (call : ProposedCall)
  | summary (session : String)

def noSession (session : String) : String := s!"no session \"{session}\": load a workflow first"

/-- Reads a request. It only asks `sessions` whether the named session exists, so
that the first problem is reported in this order: `op`, `session`, the fields of
`load`, an unknown session, the fields of `append` or `gate`, an unknown op. -/
def Request.fromJson? (sessions : Sessions) (req : Json) : Except String Request := do
  Read.object "request" req
  let op ← Read.str "op" (← Read.req "request" req "op")
  if op == "hello" then return .hello
  let session ← Read.str "session" (← Read.req "request" req "session")
  if op == "load" then
    let wf ← Workflow.fromJson? (← Read.req "load" req "workflow")
    let headerLine ← Read.optD req "headerLine" 1 (Read.posNat "headerLine")
    -- The header's record of the run's sandbox; absent for trajectories that record none.
    let sandbox ← Read.opt req "sandbox" SandboxRecord.fromJson?
    return .load session wf headerLine sandbox
  if op == "close" then return .close session
  unless sessions.contains session do throw (noSession session)
  if op == "append" then
    let line ← Read.posNat "line" (← Read.req "append" req "line")
    let event ← Event.fromJson? (← Read.req "append" req "event")
    return .append session line event
  if op == "gate" then
    return .gate session (← ProposedCall.fromJson? (← Read.req "gate" req "call"))
  if op == "summary" then return .summary session
  throw s!"unknown op \"{op}\" (expected hello, load, append, gate, summary or close)"

/-- Carries out a request; returns the sessions after it (unchanged on an error) and
the result. For `append`, the session's state is taken out of the map before it is
fed the event, so that it is referenced only once and is updated in place (its
failed-call map included) instead of being copied on every step. -/
def runRequest (sessions : Sessions) : Request → Sessions × Except String Json
  | .hello =>
    (sessions, .ok (Json.mkObj [("protocol", toJson protocolVersion), ("lar", toJson (1 : Nat)),
      ("checker", toJson "lar-verify"), ("sessions", toJson sessions.size)]))
  | .load session wf headerLine sandbox =>
    (match State.create wf headerLine sandbox with
     | .ok st => (sessions.insert session st, .ok (Json.mkObj [("session", toJson session)]))
     | .error e => (sessions, .error e))
  | .close session => (sessions.erase session, .ok (Json.mkObj [("session", toJson session)]))
  | .append session line event =>
    (match sessions[session]? with
     | none => (sessions, .error (noSession session))
     | some st =>
       let rest := sessions.erase session
       let (st', result) := st.append line event
       (rest.insert session st', .ok (toJson result)))
  | .gate session call =>
    (match sessions[session]? with
     | none => (sessions, .error (noSession session))
     | some st => (sessions, .ok (toJson (st.gate call))))
  | .summary session =>
    (match sessions[session]? with
     | none => (sessions, .error (noSession session))
     | some st => (sessions, .ok st.summary))

/-- Handles one request object; returns the sessions after it and the result. -/
def handle (sessions : Sessions) (req : Json) : Sessions × Except String Json :=
  match Request.fromJson? sessions req with
  | .ok r => runRequest sessions r
  | .error e => (sessions, .error e)

/-- One request line in, one response out. Never fails. The sessions are passed
along on every path (never kept for an error branch), so the map stays uniquely
referenced and is updated in place. -/
def respond (sessions : Sessions) (line : String) : Json × Sessions :=
  match Json.parse line with
  | .error e => (errorResponse Json.null s!"invalid JSON request: {e}", sessions)
  | .ok req =>
    let id := (field? req "id").getD Json.null
    let (next, r) := handle sessions req
    match r with
    | .ok result => (okResponse id result, next)
    | .error e => (errorResponse id e, next)

end Lar.Protocol
