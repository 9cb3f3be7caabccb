import Lar

/-!
`lar-verify`: the Lean checker behind the extension's Lean backend. It reads
JSON-lines requests on standard input and writes one JSON-line response per
request on standard output, flushed at once, until standard input closes. The
protocol is in docs/lean.md; `Lar.Protocol.respond` implements it.
-/

open Lean Lar

def main : IO Unit := do
  let stdin ← IO.getStdin
  let stdout ← IO.getStdout
  let mut sessions : Protocol.Sessions := {}
  repeat
    let line ← try stdin.getLine catch _ => pure ""
    -- `getLine` returns "" only at the end of input (a blank line is "\n").
    if line.isEmpty then break
    if line.toList.all isSpace then continue
    let (response, next) := Protocol.respond sessions line
    sessions := next
    stdout.putStrLn response.compress
    stdout.flush
