/-
Patterns (docs/rewards.md, "Patterns"): the glob relation and its decision
procedure, whitespace normalization, command parts and workspace paths.

Everything here works on `List Char`, so the proofs never look inside `String`
(whose representation is a byte array). A glob character is a Unicode scalar
value (a Lean `Char`); see docs/lean.md for how that compares with the
TypeScript matcher, which indexes UTF-16 code units.
-/
namespace Lar

/-! ## The glob relation -/

/-- `Matches p s`: the pattern `p` matches the whole text `s`. One constructor
per line of the definition of `match` in docs/rewards.md. The special
characters appear as premises (`c = '*'`) rather than in the indices, so that
case analysis on a derivation only ever unifies variables and list
constructors. -/
inductive Matches : List Char → List Char → Prop where
  /-- `match([], s) = s == []` -/
  | nil : Matches [] []
  /-- `'*'` matches the empty run: `match(p, s)`. -/
  | starSkip {c : Char} {p s : List Char} : c = '*' → Matches p s → Matches (c :: p) s
  /-- `'*'` eats one more character: `s = c :: s' ∧ match('*' :: p, s')`. -/
  | starEat {c d : Char} {p s : List Char} : c = '*' → Matches (c :: p) s → Matches (c :: p) (d :: s)
  /-- `'?'` matches exactly one character. -/
  | any {c d : Char} {p s : List Char} : c = '?' → Matches p s → Matches (c :: p) (d :: s)
  /-- Any other character matches itself. -/
  | lit {c : Char} {p s : List Char} : c ≠ '*' → c ≠ '?' → Matches p s → Matches (c :: p) (c :: s)

/-! ## Deciding it: a set-of-suffixes automaton

The recursive definition is exponential in the number of `*` on bad inputs, so
the checker runs the pattern as a nondeterministic automaton whose states are
suffixes of the pattern, kept without duplicates (at most `|p| + 1` of them).
`globMatchL_iff` proves it decides exactly `Matches`. -/

/-- The pattern suffix accepts the empty text. -/
def nullable : List Char → Bool
  | [] => true
  | c :: p => decide (c = '*') && nullable p

theorem nullable_iff : ∀ p : List Char, nullable p = true ↔ Matches p []
  | [] => ⟨fun _ => .nil, fun _ => rfl⟩
  | c :: p => by
    have ih := nullable_iff p
    constructor
    · intro h
      simp only [nullable, Bool.and_eq_true, decide_eq_true_eq] at h
      exact .starSkip h.1 (ih.mp h.2)
    · intro h
      cases h with
      | starSkip hc hp =>
        simp only [nullable, Bool.and_eq_true, decide_eq_true_eq]
        exact ⟨hc, ih.mpr hp⟩

/-- The pattern suffixes that remain after reading one character `d`. -/
def deriv (d : Char) : List Char → List (List Char)
  | [] => []
  | c :: p =>
    if c = '*' then (c :: p) :: deriv d p
    else if c = '?' ∨ c = d then [p] else []

theorem deriv_cons (d c : Char) (p : List Char) :
    deriv d (c :: p) =
      if c = '*' then (c :: p) :: deriv d p else if c = '?' ∨ c = d then [p] else [] := rfl

theorem deriv_iff (d : Char) (s : List Char) :
    ∀ p : List Char, Matches p (d :: s) ↔ ∃ q ∈ deriv d p, Matches q s
  | [] => by
    constructor
    · intro h; cases h
    · rintro ⟨q, hq, _⟩; simp [deriv] at hq
  | c :: p => by
    have ih := deriv_iff d s p
    by_cases hs : c = '*'
    · rw [deriv_cons, if_pos hs]
      constructor
      · intro h
        cases h with
        | starSkip _ hp =>
          obtain ⟨q, hq, hm⟩ := ih.mp hp
          exact ⟨q, List.mem_cons.mpr (Or.inr hq), hm⟩
        | starEat _ hp => exact ⟨c :: p, List.mem_cons.mpr (Or.inl rfl), hp⟩
        | any hc _ => exact absurd (hs.symm.trans hc) (by decide)
        | lit hc _ _ => exact absurd hs hc
      · rintro ⟨q, hq, hm⟩
        rcases List.mem_cons.mp hq with rfl | hq
        · exact .starEat hs hm
        · exact .starSkip hs (ih.mpr ⟨q, hq, hm⟩)
    · constructor
      · intro h
        cases h with
        | starSkip hc _ => exact absurd hc hs
        | starEat hc _ => exact absurd hc hs
        | any hc hm =>
          refine ⟨p, ?_, hm⟩
          rw [deriv_cons, if_neg hs, if_pos (Or.inl hc)]
          simp
        | lit _ _ hm => exact ⟨p, by simp [deriv_cons, hs], hm⟩
      · rintro ⟨q, hq, hm⟩
        rw [deriv_cons, if_neg hs] at hq
        by_cases hq' : c = '?' ∨ c = d
        · rw [if_pos hq'] at hq
          obtain rfl := List.mem_singleton.mp hq
          by_cases hc2 : c = '?'
          · exact .any hc2 hm
          · have hcd : c = d := hq'.resolve_left hc2
            subst hcd
            exact .lit hs hc2 hm
        · rw [if_neg hq'] at hq
          simp at hq

/-- Adds a state unless it is already there. -/
def addUniq (q : List Char) (S : List (List Char)) : List (List Char) :=
  if q ∈ S then S else q :: S

theorem mem_addUniq (x q : List Char) (S : List (List Char)) :
    x ∈ addUniq q S ↔ x = q ∨ x ∈ S := by
  unfold addUniq
  split
  · rename_i h
    constructor
    · exact Or.inr
    · rintro (rfl | hx)
      · exact h
      · exact hx
  · exact List.mem_cons

/-- One step of the automaton. -/
def step (d : Char) : List (List Char) → List (List Char)
  | [] => []
  | q :: S => (deriv d q).foldr addUniq (step d S)

theorem mem_foldr_addUniq (x : List Char) (T : List (List Char)) :
    ∀ L : List (List Char), x ∈ L.foldr addUniq T ↔ x ∈ L ∨ x ∈ T
  | [] => by simp
  | q :: L => by
    rw [List.foldr_cons, mem_addUniq, mem_foldr_addUniq x T L, List.mem_cons, or_assoc]

theorem mem_step (d : Char) (x : List Char) :
    ∀ S : List (List Char), x ∈ step d S ↔ ∃ q ∈ S, x ∈ deriv d q
  | [] => by simp [step]
  | q :: S => by
    simp only [step, mem_foldr_addUniq, mem_step d x S, List.mem_cons]
    constructor
    · rintro (h | ⟨q', hq', h⟩)
      · exact ⟨q, Or.inl rfl, h⟩
      · exact ⟨q', Or.inr hq', h⟩
    · rintro ⟨q', (rfl | hq'), h⟩
      · exact Or.inl h
      · exact Or.inr ⟨q', hq', h⟩

/-- Runs the automaton from the state set `S` over the text. -/
def runNFA : List (List Char) → List Char → Bool
  | S, [] => S.any nullable
  | S, d :: s => runNFA (step d S) s

theorem runNFA_iff : ∀ (s : List Char) (S : List (List Char)),
    runNFA S s = true ↔ ∃ q ∈ S, Matches q s
  | [], S => by
    simp only [runNFA, List.any_eq_true]
    constructor
    · rintro ⟨q, hq, h⟩; exact ⟨q, hq, (nullable_iff q).mp h⟩
    · rintro ⟨q, hq, h⟩; exact ⟨q, hq, (nullable_iff q).mpr h⟩
  | d :: s, S => by
    simp only [runNFA]
    rw [runNFA_iff s (step d S)]
    constructor
    · rintro ⟨q, hq, hm⟩
      obtain ⟨q', hq', hd⟩ := (mem_step d q S).mp hq
      exact ⟨q', hq', (deriv_iff d s q').mpr ⟨q, hd, hm⟩⟩
    · rintro ⟨q', hq', hm⟩
      obtain ⟨q, hd, hm'⟩ := (deriv_iff d s q').mp hm
      exact ⟨q, (mem_step d q S).mpr ⟨q', hq', hd⟩, hm'⟩

/-- The decision procedure for `Matches`. -/
def globMatchL (p s : List Char) : Bool := runNFA [p] s

theorem globMatchL_iff (p s : List Char) : globMatchL p s = true ↔ Matches p s := by
  unfold globMatchL
  rw [runNFA_iff]
  constructor
  · rintro ⟨q, hq, hm⟩
    obtain rfl := List.mem_singleton.mp hq
    exact hm
  · intro h
    exact ⟨p, List.mem_singleton.mpr rfl, h⟩

/-- `match(pattern, text)` of docs/rewards.md on strings. -/
def globMatch (pattern text : String) : Bool := globMatchL pattern.toList text.toList

theorem globMatch_iff (pattern text : String) :
    globMatch pattern text = true ↔ Matches pattern.toList text.toList :=
  globMatchL_iff _ _

/-! ## Whitespace normalization and command parts -/

/-- Space, tab, newline, carriage return, form feed, vertical tab. -/
def isSpace (c : Char) : Bool :=
  c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\x0c' || c == '\x0b'

/-- The separators of command parts: `;` `&` `|` newline, carriage return, `(` `)` and backtick. -/
def isPartSep (c : Char) : Bool :=
  c == ';' || c == '&' || c == '|' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == '`'

/-- Splits at every separator (dropping it); empty pieces are kept. -/
def splitBy (sep : Char → Bool) : List Char → List (List Char)
  | [] => [[]]
  | c :: cs =>
    let rest := splitBy sep cs
    if sep c then [] :: rest
    else match rest with
      | [] => [[c]]
      | w :: ws => (c :: w) :: ws

/-- Joins pieces with one separator character between them. -/
def joinWith (sep : Char) : List (List Char) → List Char
  | [] => []
  | [w] => w
  | w :: ws => w ++ sep :: joinWith sep ws

/-- `norm(t)`: split at whitespace, drop empty words, join with one space. -/
def normL (t : List Char) : List Char :=
  joinWith ' ' ((splitBy isSpace t).filter (fun w => !w.isEmpty))

/-- `parts(cmd)`: split at the part separators, normalize each piece, drop empty ones. -/
def partsL (cmd : List Char) : List (List Char) :=
  ((splitBy isPartSep cmd).map normL).filter (fun w => !w.isEmpty)

def norm (t : String) : String := String.ofList (normL t.toList)

/-- A pattern matches a command when it matches the normalized command or one of its parts. -/
def CommandMatches (pattern cmd : List Char) : Prop :=
  Matches pattern (normL cmd) ∨ ∃ part ∈ partsL cmd, Matches pattern part

def commandMatchesB (pattern cmd : List Char) : Bool :=
  globMatchL pattern (normL cmd) || (partsL cmd).any (globMatchL pattern)

theorem commandMatches_iff (pattern cmd : List Char) :
    commandMatchesB pattern cmd = true ↔ CommandMatches pattern cmd := by
  simp [commandMatchesB, CommandMatches, List.any_eq_true, globMatchL_iff]

/-- The first pattern of the list that matches the command, as `firstMatch` in core/policy/command.ts. -/
def firstCommandMatch (patterns : List String) (cmd : String) : Option String :=
  patterns.find? (fun p => commandMatchesB p.toList cmd.toList)

/-! ## Workspace paths -/

def isAsciiLetter (c : Char) : Bool :=
  ('a' ≤ c && c ≤ 'z') || ('A' ≤ c && c ≤ 'Z')

/-- Drops empty and `.` segments and resolves `..`; `none` when `..` climbs out. -/
def resolveSegs : List (List Char) → List (List Char) → Option (List (List Char))
  | acc, [] => some acc.reverse
  | acc, seg :: rest =>
    if seg.isEmpty || seg == ['.'] then resolveSegs acc rest
    else if seg == ['.', '.'] then
      (match acc with
       | [] => none
       | _ :: acc' => resolveSegs acc' rest)
    else resolveSegs (seg :: acc) rest

/-- `npath(p)`: the normalized workspace-relative path, or why it is rejected. -/
def npath (path : String) : Except String String :=
  let cs := path.toList.map (fun c => if c == '\\' then '/' else c)
  let drive := match cs with
    | c :: ':' :: _ => isAsciiLetter c
    | _ => false
  if cs.head? == some '/' then
    .error s!"\"{path}\" is an absolute path; paths must be relative to the workspace"
  else if cs.head? == some '~' then
    .error s!"\"{path}\" starts with \"~\" (the home folder), which is outside the workspace"
  else if drive then
    .error s!"\"{path}\" names a drive; paths must be relative to the workspace"
  else
    match resolveSegs [] (splitBy (· == '/') cs) with
    | none => .error s!"\"{path}\" climbs out of the workspace with \"..\""
    | some [] => .ok "."
    | some segs => .ok (String.ofList (joinWith '/' segs))

/-- The form of a changed file that `file_changed` patterns see: `npath`, or the path as recorded. -/
def npathOrSelf (path : String) : String :=
  match npath path with
  | .ok n => n
  | .error _ => path

/-! Sanity checks, evaluated when the file is compiled. -/
#guard globMatch "*test*" "npm test"
#guard globMatch "npm test" "npm test"
#guard !globMatch "npm test" "npm  test"
#guard globMatch "a?c" "abc"
#guard !globMatch "a?c" "ac"
#guard globMatch "*" ""
#guard !globMatch "" "x"
#guard globMatch "*a*a*a*b" "aaaaaaaaaaaaaaaaaaaaaaaab"
#guard !globMatch "*a*a*a*b" "aaaaaaaaaaaaaaaaaaaaaaaaa"
#guard norm "  npm\t test \n" == "npm test"
#guard (partsL "true && rm -rf / ; echo `id`".toList).map String.ofList == ["true", "rm -rf /", "echo", "id"]
#guard commandMatchesB "rm -rf /".toList "true && rm  -rf /".toList
#guard (npath "./src//a/../b.ts").toOption == some "src/b.ts"
#guard (npath "a/..").toOption == some "."
#guard (npath "../x").toOption == none
#guard (npath "C:foo").toOption == none
#guard (npath "\\etc").toOption == none

end Lar
