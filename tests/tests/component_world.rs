//! The built component's WIT world is the one in `wit/`: same imports, same exports,
//! same types and signatures.

use std::path::Path;

use wit_component::{DecodedWasm, WitPrinter};
use wit_parser::{InterfaceId, Resolve, WorldItem, WorldKey};

const PACKAGE: &str = "ledger:node@0.1.0";

/// The items of an interface (types and functions) as WIT text without doc comments,
/// sorted: declaration order carries no meaning, and a decoded component lists types
/// in the order it uses them.
fn print_interface(resolve: &Resolve, id: InterfaceId) -> Vec<String> {
    let mut printer = WitPrinter::default();
    printer.emit_docs(false);
    printer.print_interface(resolve, id).expect("printing an interface");
    let text = printer.output.to_string();
    let mut items: Vec<String> =
        text.split("\n\n").map(|item| item.trim().to_owned()).filter(|i| !i.is_empty()).collect();
    items.sort();
    items
}

/// The `ledger:node` interfaces a world imports or exports, by name, as WIT text.
fn interfaces<'a>(
    resolve: &Resolve,
    items: impl Iterator<Item = (&'a WorldKey, &'a WorldItem)>,
) -> Vec<(String, Vec<String>)> {
    let mut found: Vec<(String, Vec<String>)> = items
        .filter_map(|(_, item)| match item {
            WorldItem::Interface { id, .. } => {
                let interface = &resolve.interfaces[*id];
                let package = &resolve.packages[interface.package?];
                if package.name.to_string() != PACKAGE {
                    return None;
                }
                Some((interface.name.clone()?, print_interface(resolve, *id)))
            }
            _ => None,
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_built_component_exports_and_imports_exactly_the_wit_world() {
    let wit_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let mut declared = Resolve::default();
    let (package, _) = declared.push_dir(&wit_dir).expect("wit/ parses");
    let world = declared.select_world(&[package], Some("node")).expect("wit/ has the node world");
    let declared_world = &declared.worlds[world];

    let bytes = ledger_node::host::COMPONENT.to_vec();
    let DecodedWasm::Component(built, built_world) = wit_component::decode(&bytes).expect("the component decodes")
    else {
        panic!("the artifact is not a component");
    };
    let built_world = &built.worlds[built_world];

    let want_imports = interfaces(&declared, declared_world.imports.iter());
    let want_exports = interfaces(&declared, declared_world.exports.iter());
    assert_eq!(want_imports.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["store"]);
    assert_eq!(want_exports.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["handler"]);
    assert_eq!(interfaces(&built, built_world.imports.iter()), want_imports, "imports differ from wit/");
    assert_eq!(interfaces(&built, built_world.exports.iter()), want_exports, "exports differ from wit/");

    // Nothing else is exported; everything else imported is WASI.
    assert_eq!(built_world.exports.len(), 1, "the component exports more than the handler");
    for (key, _) in &built_world.imports {
        let name = built.name_world_key(key);
        assert!(
            name.starts_with("wasi:") || name.starts_with(PACKAGE.split('@').next().unwrap_or(PACKAGE)),
            "unexpected import {name}"
        );
    }
}
