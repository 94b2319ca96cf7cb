//! Entry point of the page: everything lives in the library so the browser
//! tests can reach it.

#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    stampede_lab::start();
}
