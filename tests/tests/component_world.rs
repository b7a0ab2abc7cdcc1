//! The built component's WIT world is the one in `wit/`: it targets the `node` world,
//! whose imports (the node's store and the WASI interfaces) and exports are exactly
//! the component's, with the same types and signatures.

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

/// The names of a world's imports or exports, sorted.
fn names<'a>(resolve: &Resolve, items: impl Iterator<Item = (&'a WorldKey, &'a WorldItem)>) -> Vec<String> {
    let mut names: Vec<String> = items
        .filter(|(_, item)| matches!(item, WorldItem::Interface { .. }))
        .map(|(key, _)| resolve.name_world_key(key))
        .collect();
    names.sort();
    names
}

#[test]
fn the_built_component_exports_and_imports_exactly_the_wit_world() {
    let wit_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let mut declared = Resolve::default();
    let (package, _) = declared.push_dir(&wit_dir).expect("wit/ parses");
    let world = declared.select_world(&[package], Some("node")).expect("wit/ has the node world");
    let declared_world = &declared.worlds[world];

    let bytes = ledger_node::host::COMPONENT.to_vec();
    // What a host author's tooling checks (`wasm-tools component targets`): the
    // component can run wherever the world is provided.
    if let Err(e) = wit_component::targets(&declared, world, &bytes, false) {
        panic!("the component does not target wit/'s node world: {e:#}");
    }

    let DecodedWasm::Component(built, built_world) = wit_component::decode(&bytes).expect("the component decodes")
    else {
        panic!("the artifact is not a component");
    };
    let built_world = &built.worlds[built_world];

    // The world declares every import the component has, and nothing it does not use.
    assert_eq!(
        names(&built, built_world.imports.iter()),
        names(&declared, declared_world.imports.iter()),
        "the component's imports differ from wit/'s node world"
    );
    assert_eq!(names(&built, built_world.exports.iter()), names(&declared, declared_world.exports.iter()));

    // The node's own interfaces match wit/ type for type.
    let want_imports = interfaces(&declared, declared_world.imports.iter());
    let want_exports = interfaces(&declared, declared_world.exports.iter());
    assert_eq!(want_imports.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["store"]);
    assert_eq!(want_exports.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["handler"]);
    assert_eq!(interfaces(&built, built_world.imports.iter()), want_imports, "imports differ from wit/");
    assert_eq!(interfaces(&built, built_world.exports.iter()), want_exports, "exports differ from wit/");
}
