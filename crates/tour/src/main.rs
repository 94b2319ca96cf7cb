//! The page's tour build: the same page without its `full` feature, for an
//! address that opens the guided tour (src/more.rs in the page's crate).
//! `scripts/build-tour.sh` builds it into `dist/` beside the full build.

#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    stampede_lab::start();
}
