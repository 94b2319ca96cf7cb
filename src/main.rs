//! Entry point of the page: everything lives in the library so the browser
//! tests can reach it.

fn main() {
    stampede_lab::start();
}
