# Sourced by the project's scripts: the environment the worker build and wrangler need,
# pointing at the tools scripts/setup installs. Nothing here downloads anything.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export WASM_BINDGEN_BIN="${CARGO_HOME:-$HOME/.cargo}/bin/wasm-bindgen"
export ESBUILD_BIN="$ROOT/node_modules/@esbuild/linux-x64/bin/esbuild"
export WRANGLER_SEND_METRICS=false
export CLOUDFLARE_CF_FETCH_ENABLED=false
export WRANGLER_HIDE_BANNER=true
export RUSTUP_TOOLCHAIN="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$ROOT/rust-toolchain.toml")"
