import Lar.Spec.Checks

/-!
Patterns: the proof that the checker's automaton (`globMatch`, `Lar.Glob`) decides the glob relation
`Matches` of docs/rewards.md (`Lar.Spec.Checks`, one constructor per line of `match`), and that
`commandMatchesB` decides `CommandMatches`.
-/

namespace Lar
open Lean

/-- The automaton accepts a pattern suffix on the empty text exactly when it matches the empty text. -/
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

/-- One step of the derivative of a pattern that starts with `c`, unfolded. -/
theorem deriv_cons (d c : Char) (p : List Char) :
    deriv d (c :: p) =
      if c = '*' then (c :: p) :: deriv d p else if c = '?' ∨ c = d then [p] else [] := rfl

/-- A pattern matches `d :: s` exactly when some pattern in its derivative by `d` matches `s`. -/
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

/-- `addUniq q S` holds `q` and the states of `S`, nothing else. -/
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

/-- Adding the states of `L` to `T` one at a time gives the states of `L` and of `T`. -/
theorem mem_foldr_addUniq (x : List Char) (T : List (List Char)) :
    ∀ L : List (List Char), x ∈ L.foldr addUniq T ↔ x ∈ L ∨ x ∈ T
  | [] => by simp
  | q :: L => by
    rw [List.foldr_cons, mem_addUniq, mem_foldr_addUniq x T L, List.mem_cons, or_assoc]

/-- The states after reading `d` are the derivatives by `d` of the states before. -/
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

/-- The automaton run from the states `S` accepts `s` exactly when some state of `S` matches `s`. -/
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

/-- `globMatchL` decides `Matches` on lists of characters. -/
theorem globMatchL_iff (p s : List Char) : globMatchL p s = true ↔ Matches p s := by
  unfold globMatchL
  rw [runNFA_iff]
  constructor
  · rintro ⟨q, hq, hm⟩
    obtain rfl := List.mem_singleton.mp hq
    exact hm
  · intro h
    exact ⟨p, List.mem_singleton.mpr rfl, h⟩

/-- `globMatch` decides `Matches`: the checker's pattern matching is the relation of rewards.md. -/
theorem globMatch_iff (pattern text : String) :
    globMatch pattern text = true ↔ Matches pattern.toList text.toList :=
  globMatchL_iff _ _

/-- `commandMatchesB` decides `CommandMatches` (the pattern matches the normalized command or one of its parts). -/
theorem commandMatches_iff (pattern cmd : List Char) :
    commandMatchesB pattern cmd = true ↔ CommandMatches pattern cmd := by
  simp [commandMatchesB, CommandMatches, List.any_eq_true, globMatchL_iff]

end Lar
