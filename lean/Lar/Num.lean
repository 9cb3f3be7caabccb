import Lean.Data.Json

/-
Numbers at the JSON boundary.

The TypeScript side reads and writes JavaScript numbers (IEEE doubles). For
`lar-verify` to print exactly the numbers the builtin verifier computes, the
reward weights are read into `Float` with correct rounding, the float results
are printed with 17 significant digits (enough for any double to read back as
itself), and integers are checked the way zod's `.int()` checks them (a safe
integer). Nothing here is used in a theorem: the rewards themselves are `Int`.
-/
namespace Lar.Num
open Lean

/-- The value of a JSON number when it is an integer. A nonzero mantissa m is a
multiple of 10^e only if |m| ≥ 10^e ≥ 2^(3e), so that size test comes first: a
hand-written exponent such as `1e-1000000000` then costs nothing instead of
computing 10^e. (The result is the same with or without the test.) -/
def intOf? (n : JsonNumber) : Option Int :=
  if n.mantissa == 0 then some 0
  else if Nat.log2 n.mantissa.natAbs < 3 * n.exponent then none
  else
    let d : Int := (10 : Int) ^ n.exponent
    if n.mantissa % d == 0 then some (n.mantissa / d) else none

/-- A safe integer (|n| ≤ 2^53 − 1), as `z.number().int()` accepts. -/
def safeIntOf? (n : JsonNumber) : Option Int :=
  match intOf? n with
  | some i => if i.natAbs ≤ 2 ^ 53 - 1 then some i else none
  | none => none

/-- `⌊n · 2^k / d⌋`, the remainder and the divisor, for any integer `k`. -/
private def scaledDiv (n d : Nat) (k : Int) : Nat × Nat × Nat :=
  if k ≥ 0 then
    let num := n * 2 ^ k.toNat
    (num / d, num % d, d)
  else
    let den := d * 2 ^ (-k).toNat
    (n / den, n % den, den)

/-- Rounds `q + r/den` to the nearest integer, ties to even. -/
private def roundHalfEven (q r den : Nat) : Nat :=
  if 2 * r > den || (2 * r == den && q % 2 == 1) then q + 1 else q

/-- `m / 10^e` as the nearest double (ties to even), like JavaScript's number parsing. -/
def decimalToFloat (m : Int) (e : Nat) : Float :=
  let n := m.natAbs
  if n == 0 then 0.0 else
  -- n / 10^e < 2^(log2 n + 1) / 2^(3e): when that is at most 2^-1076, less than half
  -- the least subnormal, the nearest double is zero, and 10^e (which a hand-written
  -- exponent could make enormous) is never computed.
  if Nat.log2 n + 1077 ≤ 3 * e then (if m < 0 then -0.0 else 0.0) else
  let d := 10 ^ e
  -- n / d lies in [2^(a-b-1), 2^(a-b+1)) for a = log2 n, b = log2 d, so one of
  -- k0 and k0 + 1 puts ⌊n · 2^k / d⌋ in [2^52, 2^53).
  let k0 : Int := 52 - ((Nat.log2 n : Int) - (Nat.log2 d : Int))
  let k := if (scaledDiv n d k0).1 < 2 ^ 52 then k0 + 1 else k0
  let qrd := scaledDiv n d k
  let q := roundHalfEven qrd.1 qrd.2.1 qrd.2.2
  let x := Float.scaleB (UInt64.toFloat q.toUInt64) (-k)
  if m < 0 then -x else x

def jsonNumberToFloat (n : JsonNumber) : Float := decimalToFloat n.mantissa n.exponent

private def digitCount (n : Nat) : Nat := (Nat.toDigits 10 n).length

/-- `⌊log10 (num / den)⌋` for positive `num` and `den`. -/
private def floorLog10 (num den : Nat) : Int :=
  if num ≥ den then (digitCount (num / den) : Int) - 1
  else
    let k0 := digitCount den - digitCount num
    let k := if num * 10 ^ k0 ≥ den then k0 else k0 + 1
    -(k : Int)

private def stripZeros : Nat → Nat → Int → Nat × Int
  | 0, q, s => (q, s)
  | fuel + 1, q, s =>
    if q != 0 && q % 10 == 0 then stripZeros fuel (q / 10) (s - 1) else (q, s)

/-- A finite double as a JSON number with 17 significant digits (rounded half to
even), which JavaScript reads back as the same double. NaN and infinities become
`null`, as `JSON.stringify` writes them. -/
def floatToJson (x : Float) : Json :=
  if x.isNaN || x.isInf then Json.null
  else if x == 0.0 then Json.num (0 : Int)
  else
    let neg : Bool := x < 0.0
    let ax := if neg then -x else x
    let (fr, ex) := ax.frExp
    -- ax = fr · 2^ex with fr ∈ [0.5, 1): M = fr · 2^53 is an exact integer.
    let M := (fr.scaleB 53).toUInt64.toNat
    let E : Int := ex - 53
    let nd : Nat × Nat := if E ≥ 0 then (M * 2 ^ E.toNat, 1) else (M, 2 ^ (-E).toNat)
    let num := nd.1
    let den := nd.2
    let s : Int := 16 - floorLog10 num den
    let qrd : Nat × Nat × Nat :=
      if s ≥ 0 then
        let t := num * 10 ^ s.toNat
        (t / den, t % den, den)
      else
        let dd := den * 10 ^ (-s).toNat
        (num / dd, num % dd, dd)
    let (q, s) := stripZeros 18 (roundHalfEven qrd.1 qrd.2.1 qrd.2.2) s
    let mant : Int := if neg then -(q : Int) else q
    if s ≥ 0 then Json.num ⟨mant, s.toNat⟩
    else Json.num ⟨mant * (10 : Int) ^ (-s).toNat, 0⟩

end Lar.Num
