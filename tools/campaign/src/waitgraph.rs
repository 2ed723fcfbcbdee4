//! `waits.png` beside a hung run: its ranks on a circle, coloured by what they
//! do (waiting in a call, dead, finished, elsewhere), an arrow from each rank to
//! each rank it waits for, labelled with the call; the paragraph below.

use crate::forensics::Finding;
use crate::font::load_font;
use crate::states::RankState;
use plotters::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;

const W: i32 = 900;
const GRAPH: i32 = 560;
const RADIUS: f64 = 210.0;
const NODE: i32 = 24;

fn fill(s: &RankState) -> RGBColor {
    match s.state.as_str() {
        _ if s.is_dead() => RGBColor(150, 150, 150),
        "in" => RGBColor(240, 150, 30),
        "finalized" => RGBColor(60, 170, 80),
        "gone" => RGBColor(210, 40, 40),
        _ => RGBColor(80, 130, 210),
    }
}

/// Centre of rank `i` of `n` on the circle.
fn at(i: usize, n: usize) -> (i32, i32) {
    let a = std::f64::consts::TAU * i as f64 / n.max(1) as f64 - std::f64::consts::FRAC_PI_2;
    ((W as f64 / 2.0 + RADIUS * a.cos()) as i32, (GRAPH as f64 / 2.0 + 20.0 + RADIUS * a.sin()) as i32)
}

/// Words of `text` in lines of at most `width` characters.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for w in text.split_whitespace() {
        let last = lines.last_mut().expect("never empty");
        if !last.is_empty() && last.len() + 1 + w.len() > width {
            lines.push(w.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(w);
        }
    }
    lines
}

/// Draws the graph of `f` over `states` into `path`.
pub fn draw(path: &Path, states: &[RankState], f: &Finding) -> Result<(), String> {
    let lines = wrap(&f.paragraph, 120);
    let h = GRAPH + 30 + 16 * lines.len() as i32;
    let fonts = load_font();
    let root = BitMapBackend::new(path, (W as u32, h as u32)).into_drawing_area();
    let e = |e: DrawingAreaErrorKind<_>| format!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(e)?;
    let n = states.len();
    let pos = |r: u32| states.iter().position(|s| s.rank == r).map(|i| at(i, n));
    let pairs: BTreeSet<(u32, u32)> = f.edges.iter().map(|x| (x.from, x.to)).collect();
    for (a, b) in &pairs {
        let (Some(p), Some(q)) = (pos(*a), pos(*b)) else { continue };
        let (dx, dy) = ((q.0 - p.0) as f64, (q.1 - p.1) as f64);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let (ux, uy) = (dx / len, dy / len);
        let tip = (q.0 - (ux * NODE as f64) as i32, q.1 - (uy * NODE as f64) as i32);
        let from = (p.0 + (ux * NODE as f64) as i32, p.1 + (uy * NODE as f64) as i32);
        root.draw(&PathElement::new(vec![from, tip], BLACK.stroke_width(2))).map_err(e)?;
        let back = |s: f64| (tip.0 as f64 - ux * 14.0 + s * uy * 6.0, tip.1 as f64 - uy * 14.0 - s * ux * 6.0);
        let (l, r) = (back(1.0), back(-1.0));
        root.draw(&Polygon::new(vec![tip, (l.0 as i32, l.1 as i32), (r.0 as i32, r.1 as i32)], BLACK.filled())).map_err(e)?;
    }
    for (i, s) in states.iter().enumerate() {
        let c = at(i, n);
        root.draw(&Circle::new(c, NODE, fill(s).filled())).map_err(e)?;
    }
    if fonts {
        let big = TextStyle::from(("sans-serif", 16).into_font()).color(&BLACK);
        let text = TextStyle::from(("sans-serif", 12).into_font()).color(&BLACK);
        root.draw_text(&format!("why it hangs: {}", f.pattern), &big, (10, 8)).map_err(e)?;
        for (i, s) in states.iter().enumerate() {
            let c = at(i, n);
            root.draw_text(&s.rank.to_string(), &big, (c.0 - 5, c.1 - 8)).map_err(e)?;
            let what = if s.is_dead() { "dead".to_string() } else { format!("{} ({})", s.function, s.state) };
            root.draw_text(&what, &text, (c.0 - 40, c.1 + NODE + 4)).map_err(e)?;
        }
        for (i, l) in lines.iter().enumerate() {
            root.draw_text(l, &text, (10, GRAPH + 30 + 16 * i as i32)).map_err(e)?;
        }
    }
    root.present().map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("", 5), vec![""]);
    }
}
