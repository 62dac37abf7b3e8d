//! usage: wasm-split <input.wasm> <main-out.wasm> <pkg-dir> <output-name>
//!
//! Splits a client linked with `--emit-relocs` into the main module (for wasm-bindgen) and one
//! chunk per `#[lazy]` function (into `pkg-dir`), with the loader leptos' `HydrationScripts`
//! preloads and the manifest (`__wasm_split_manifest.json`) it reads to preload a lazy route's
//! chunks. The splitter is the library behind `cargo leptos build --split`.
use std::{env, fs, path::Path};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = env::args().skip(1).collect();
    let [input, main_out, pkg_dir, name] = &args[..] else {
        return Err("usage: wasm-split <input.wasm> <main-out.wasm> <pkg-dir> <output-name>".into());
    };
    let input_wasm = fs::read(input)?;
    // The loader calls initSync from the bindgen JS.
    let main_module = format!("./{name}.js");
    fs::create_dir_all(pkg_dir)?;
    let split = wasm_split_cli_support::transform({
        let mut opts = wasm_split_cli_support::Options::new(&input_wasm);
        opts.output_dir = Path::new(pkg_dir);
        opts.main_out_path = Path::new(main_out);
        opts.main_module = &main_module;
        // The loader's name that HydrationScripts preloads when leptos' hash-files is off.
        opts.link_name = "./__wasm_split.______________________.js";
        opts
    })
    .unwrap_or_else(|e| {
        eprintln!("wasm-split: {e:?}");
        std::process::exit(1)
    });
    fs::write(Path::new(pkg_dir).join("__wasm_split_manifest.json"), serde_json::to_string_pretty(&split.prefetch_map)?)?;
    for m in &split.split_modules {
        println!("{}", m.display());
    }
    Ok(())
}
