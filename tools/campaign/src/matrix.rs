//! `matrix.png`: ranks (rows) by call numbers (columns), each single-death point
//! coloured by its verdict, calls not run grey, the x axis labelled with the
//! functions of rank 0's failure-free trace (thinned so labels do not overlap).
//! No system library: plotters' bitmap backend, a TrueType font read at run
//! time (no labels when none is found).

use crate::font::load_font;
use crate::trace::Calls;
use crate::verdict::Verdict;
use plotters::prelude::*;
use plotters::style::FontTransform;
use std::collections::HashMap;
use std::path::Path;

const LEFT: i32 = 80;
const TOP: i32 = 50;
const BOTTOM: i32 = 150;
const RIGHT: i32 = 20;

pub fn colour(v: Option<Verdict>) -> RGBColor {
    match v {
        None => RGBColor(200, 200, 200),
        Some(Verdict::Pass) => RGBColor(60, 170, 80),
        Some(Verdict::Hang) => RGBColor(240, 150, 30),
        Some(Verdict::Crash) => RGBColor(210, 40, 40),
        Some(Verdict::Wrong) => RGBColor(130, 60, 180),
    }
}

/// Pixel span of column `c` (1-based) of `cols` over `width` pixels.
fn span(c: u64, cols: u64, width: i32) -> (i32, i32) {
    let x0 = LEFT + ((c - 1) as f64 * width as f64 / cols as f64) as i32;
    let x1 = LEFT + (c as f64 * width as f64 / cols as f64) as i32;
    (x0, x1.max(x0 + 1))
}

/// Which rank-0 run starts get a label: at least `gap` pixels apart.
pub fn thin_labels(runs: &[(u64, u64, String)], cols: u64, width: i32, gap: i32) -> Vec<(i32, String)> {
    let mut out: Vec<(i32, String)> = Vec::new();
    for (first, _, name) in runs {
        if *first > cols {
            break;
        }
        let (x0, x1) = span(*first, cols, width);
        let x = (x0 + x1) / 2;
        if out.last().is_none_or(|(lx, _)| x - lx >= gap) {
            out.push((x, name.clone()));
        }
    }
    out
}

/// Draws the matrix of `cells` ((rank, call) -> verdict) to `path`.
pub fn draw(path: &Path, traces: &[Calls], cells: &HashMap<(u32, u64), Verdict>, title: &str) -> Result<(), String> {
    let np = traces.len().max(1) as i32;
    let cols = traces.iter().map(Calls::count).max().unwrap_or(0).max(1);
    let width = (cols as i32 * 10).clamp(400, 1800);
    let row = (600 / np).clamp(3, 28);
    let (w, h) = ((LEFT + width + RIGHT) as u32, (TOP + row * np + BOTTOM) as u32);
    let fonts = load_font();
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    let e = |e: DrawingAreaErrorKind<_>| format!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(e)?;
    for (r, t) in traces.iter().enumerate() {
        let y0 = TOP + r as i32 * row;
        let y1 = y0 + row - if row > 4 { 1 } else { 0 };
        if t.count() > 0 {
            let (x0, _) = span(1, cols, width);
            let (_, x1) = span(t.count(), cols, width);
            root.draw(&Rectangle::new([(x0, y0), (x1, y1)], colour(None).filled())).map_err(e)?;
        }
        // Failures drawn last: where calls share a pixel, they show.
        let mut mine: Vec<(u64, Verdict)> = cells.iter().filter(|((rr, _), _)| *rr as usize == r).map(|((_, c), v)| (*c, *v)).collect();
        mine.sort_by_key(|(c, v)| (*v, *c));
        for (c, v) in mine.into_iter().filter(|(c, _)| *c <= cols) {
            let (x0, x1) = span(c, cols, width);
            root.draw(&Rectangle::new([(x0, y0), (x1, y1)], colour(Some(v)).filled())).map_err(e)?;
        }
    }
    if fonts {
        labels(&root, traces, cols, width, row, title).map_err(e)?;
    }
    root.present().map_err(e)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

/// Title, legend, rank labels and the function names along the x axis.
fn labels(root: &Area, traces: &[Calls], cols: u64, width: i32, row: i32, title: &str) -> Result<(), DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>> {
    let text = TextStyle::from(("sans-serif", 13).into_font()).color(&BLACK);
    let small = TextStyle::from(("sans-serif", 11).into_font()).color(&BLACK);
    root.draw_text(title, &text, (LEFT, 8))?;
    let mut x = LEFT;
    for (name, v) in [("PASS", Some(Verdict::Pass)), ("HANG", Some(Verdict::Hang)), ("CRASH", Some(Verdict::Crash)), ("WRONG", Some(Verdict::Wrong)), ("not run", None)] {
        root.draw(&Rectangle::new([(x, 28), (x + 12, 40)], colour(v).filled()))?;
        root.draw_text(name, &small, (x + 16, 28))?;
        x += 90;
    }
    let np = traces.len() as i32;
    let step = ((14 + row - 1) / row).max(1);
    for r in (0..np).step_by(step as usize) {
        root.draw_text(&format!("rank {r}"), &small, (8, TOP + r * row + (row - 11).max(0) / 2))?;
    }
    let vertical = TextStyle::from(("sans-serif", 11).into_font().transform(FontTransform::Rotate90)).color(&BLACK);
    let y = TOP + np * row + 4;
    if let Some(t0) = traces.first() {
        for (x, name) in thin_labels(&t0.runs, cols, width, 14) {
            root.draw_text(&name, &vertical, (x + 6, y))?;
        }
    }
    root.draw_text(&format!("call number 1-{cols}; labels: rank 0's failure-free calls"), &small, (LEFT, y + BOTTOM - 22))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse_calls;

    #[test]
    fn labels_are_thinned() {
        let runs: Vec<(u64, u64, String)> = (0..100).map(|i| (1 + 2 * i, 2, format!("F{i}"))).collect();
        // 200 columns over 400 px: 2 px a call, a run every 4 px; 14 px apart -> every 4th run.
        let l = thin_labels(&runs, 200, 400, 14);
        assert!(l.windows(2).all(|w| w[1].0 - w[0].0 >= 14));
        assert!(l.len() >= 20 && l.len() <= 29, "{}", l.len());
        assert_eq!(l[0].1, "F0");
    }

    #[test]
    fn draws_a_png() {
        let traces = vec![parse_calls("1 1 MPI_Init\n2 30 MPI_Send\n32 1 MPI_Finalize").unwrap(), parse_calls("1 1 MPI_Init\n2 20 MPI_Recv").unwrap()];
        let mut cells = HashMap::new();
        cells.insert((0, 2), Verdict::Pass);
        cells.insert((1, 5), Verdict::Hang);
        let p = std::env::temp_dir().join(format!("campaign-matrix-{}.png", std::process::id()));
        draw(&p, &traces, &cells, "test").unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        std::fs::remove_file(&p).unwrap();
    }
}
