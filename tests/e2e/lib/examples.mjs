// The example files the page shows as code, by the language picker's
// value (independent of the page: what it must show byte for byte).
export const FILES = {
  go: "examples/go/stampede.go",
  python: "examples/python/stampede.py",
  typescript: "examples/typescript/stampede.ts",
  refresh: "examples/typescript/refresh.ts",
  rust: "examples/rust/src/lib.rs",
};
