//! The shipped atlas (`atlas/atlas.tsv`, made by `ksweep atlas`): it
//! covers every board it promises once, its tours are made again and
//! verify, the knight's theorems and the arguments agree with it, and it
//! decides at least 95 % of its entries.

use tour::exists::atlas::{coverage, leaper_of, Atlas, Entry, Verdict};
use tour::exists::{argued, known, Claim};
use tour::{Board, Configuration, Moves};

fn atlas() -> &'static Atlas {
    Atlas::embedded().expect("the shipped atlas reads")
}

fn config(e: &Entry) -> Configuration {
    Configuration::leaper(&e.rule, &e.sides).unwrap()
}

fn is_tour(v: &Verdict) -> bool {
    matches!(v, Verdict::Tour { .. } | Verdict::FromClosed)
}

#[test]
fn the_atlas_covers_every_board_once_in_both_kinds() {
    let a = atlas();
    let boards = coverage();
    assert_eq!(a.entries().len(), 2 * boards.len());
    for (rule, sides) in boards {
        let c = Configuration::leaper(&rule, &sides).unwrap();
        assert_eq!(leaper_of(c.moves()).as_deref(), Some(&rule[..]));
        for closed in [false, true] {
            assert!(a.get(c.board(), c.moves(), closed).is_some(), "{rule:?} {sides:?} closed {closed}");
        }
    }
    // The authors' (1,2,2) as an explicit list finds its entries too.
    let list: Vec<Vec<i64>> =
        Moves::from_rule(&[1, 2, 2], 3).unwrap().iter().map(|m| m.iter().map(|&x| x.into()).collect()).collect();
    let explicit = Moves::explicit(&list, 3).unwrap();
    assert!(a.get(&Board::new(&[5, 5, 5]).unwrap(), &explicit, true).is_some());
}

#[test]
fn every_tour_of_the_atlas_is_made_again_and_verifies() {
    let mut made = 0;
    for e in atlas().entries().iter().filter(|e| is_tour(&e.verdict)) {
        let t = atlas().tour(&config(e), e.closed).unwrap_or_else(|err| panic!("{e}: {err}"));
        assert!(t.is_some(), "{e}: no tour");
        made += 1;
    }
    assert!(made > 2_000, "{made} tours");
}

#[test]
fn the_knight_theorems_agree_with_the_atlas_on_every_board_they_cover() {
    let mut covered = 0;
    for e in atlas().entries().iter().filter(|e| e.rule == [2, 1]) {
        let c = config(e);
        let e_known = known(c.board(), c.moves());
        let claim = if e.closed { e_known.closed } else { e_known.open };
        match claim {
            Claim::Exists(_) => assert!(is_tour(&e.verdict), "{e}: the theorem says a tour exists"),
            Claim::Impossible(_) => assert!(matches!(e.verdict, Verdict::None(_)), "{e}: the theorem says none"),
            Claim::Unknown => continue,
        }
        covered += 1;
    }
    // Schwenk and Conrad et al. on every 2D board (1x1 to 24x24, both
    // kinds), DeMaio on the 84 boxes with every side at least 2 (closed,
    // and open where a closed tour exists).
    assert!(covered >= 600 + 84, "{covered} entries a theorem covers");
}

#[test]
fn no_argument_contradicts_the_atlas() {
    for e in atlas().entries() {
        let c = config(e);
        let a = argued(c.board(), c.moves());
        match if e.closed { a.closed } else { a.open } {
            Claim::Impossible(why) => assert!(!is_tour(&e.verdict), "{e}: {why}"),
            Claim::Exists(why) => assert!(is_tour(&e.verdict), "{e}: {why}"),
            Claim::Unknown => {}
        }
    }
}

#[test]
fn at_least_95_percent_of_the_atlas_is_decided() {
    let all = atlas().entries();
    let unknown = all.iter().filter(|e| matches!(e.verdict, Verdict::Unknown(_))).count();
    assert!(unknown * 20 <= all.len(), "{unknown} of {} unknown", all.len());
}
