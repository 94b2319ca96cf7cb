//! A canvas path written as SVG path text in wasm and handed to the canvas in
//! a single call (`new Path2D(d)`), instead of one wasm-to-JS call per
//! rectangle: 8,000 threads cost one string and one fill per colour.

use web_sys::{CanvasRenderingContext2d as Ctx, Path2d};

#[derive(Default)]
pub struct Pen {
    d: String,
}

/// Writes `v` rounded to a whole pixel: short text, fast to write and to
/// parse, and whole-pixel edges are crisp and cheap to fill.
fn num(out: &mut String, v: f64) {
    let mut n = v.round() as i64;
    if n < 0 {
        out.push('-');
        n = -n;
    }
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for d in &digits[k..] {
        out.push(char::from(*d));
    }
}

impl Pen {
    pub fn clear(&mut self) {
        self.d.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    pub fn text(&self) -> &str {
        &self.d
    }

    pub fn move_to(&mut self, x: f64, y: f64) {
        self.d.push('M');
        num(&mut self.d, x);
        self.d.push(' ');
        num(&mut self.d, y);
    }

    pub fn line_to(&mut self, x: f64, y: f64) {
        self.d.push('L');
        num(&mut self.d, x);
        self.d.push(' ');
        num(&mut self.d, y);
    }

    pub fn close(&mut self) {
        self.d.push('Z');
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64) {
        self.move_to(x, y);
        self.d.push('h');
        num(&mut self.d, w);
        self.d.push('v');
        num(&mut self.d, h);
        self.d.push('h');
        num(&mut self.d, -w);
        self.d.push('Z');
    }

    fn path(&self) -> Option<Path2d> {
        if self.d.is_empty() {
            return None;
        }
        Path2d::new_with_path_string(&self.d).ok()
    }

    pub fn fill(&self, ctx: &Ctx, colour: &str) {
        if let Some(p) = self.path() {
            ctx.set_fill_style_str(colour);
            ctx.fill_with_path_2d(&p);
        }
    }

    pub fn stroke(&self, ctx: &Ctx, colour: &str, width: f64) {
        if let Some(p) = self.path() {
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(width);
            ctx.stroke_with_path(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rects_and_lines_are_svg_path_text() {
        let mut p = Pen::default();
        assert!(p.is_empty());
        p.rect(1.0, 2.0, 3.4, 4.0);
        p.move_to(-7.6, 0.0);
        p.line_to(1234.4, 2.96);
        p.close();
        assert_eq!(p.text(), "M1 2h3v4h-3ZM-8 0L1234 3Z");
        p.clear();
        assert!(p.is_empty());
    }
}
