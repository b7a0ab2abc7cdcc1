//! The module tree's two rules, read from the sources of the core, the native host and
//! the worker.
//!
//! - **Imports go down the core's layers.** Each top-level module of `core/src` belongs to
//!   one layer of [`LAYERS`]; a module may use its own layer and the layers below it, never
//!   one above. A new top-level module has to be placed in the table.
//! - **Sibling modules form no cycle**, in any of the three crates. A use of module B from
//!   module A is an edge between the two children of their lowest common ancestor that
//!   contain A and B (a module using its ancestor's items, or its descendant's, is no
//!   edge); any cycle among the children of one module fails, named with the lines that
//!   make it.
//!
//! What is read: every `crate::`, `super::` and `self::` path, in `use` statements (nested
//! groups too) and inline in code, resolved through the modules' own `use`s and
//! re-exports to the module that defines the name. Comments, strings and code under
//! `#[cfg(test)]` are not read: the rules are about the crate as built, and a unit test may
//! drive the whole node (`crate::handle`) from any module.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};

/// The core's layers, lowest first: a module of one layer may use the layers at or below
/// its rank, never above. The same table is in the core's crate doc.
const LAYERS: &[(usize, &str, &[&str])] = &[
    (0, "model", &["model"]),
    (1, "storage", &["storage"]),
    (2, "state", &["state"]),
    (3, "api", &["api"]),
    (4, "ingest", &["ingest"]),
    (4, "follow", &["follow"]),
    (5, "the dispatcher", &["service"]),
];

fn workspace() -> PathBuf {
    // `CARGO_MANIFEST_DIR` is `tests/`, one level below the workspace.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

#[test]
fn core_imports_go_down_the_layers() {
    let core = Crate::read(&workspace().join("core/src"), "lib.rs");
    let problems = layer_violations(&core, LAYERS);
    assert!(problems.is_empty(), "the core imports against its layers:\n{}", problems.join("\n"));
}

#[test]
fn core_modules_form_no_cycle() {
    assert_no_cycles("core/src", "lib.rs");
}

#[test]
fn host_modules_form_no_cycle() {
    assert_no_cycles("host/src", "lib.rs");
}

#[test]
fn worker_modules_form_no_cycle() {
    assert_no_cycles("worker/src", "lib.rs");
}

fn assert_no_cycles(dir: &str, root: &str) {
    let krate = Crate::read(&workspace().join(dir), root);
    assert!(krate.files > 1, "{dir}: no modules read");
    let cycles = cycles(&krate);
    assert!(cycles.is_empty(), "{dir}: sibling modules depend on each other:\n{}", cycles.join("\n"));
}

/// A module's path from the crate root (`[]` is the root).
type ModulePath = Vec<String>;

/// One use of a path from a module.
#[derive(Debug, Clone)]
struct Reference {
    /// The module whose code holds the path.
    from: ModulePath,
    file: String,
    line: usize,
    /// The path as written, `crate::store::Store`.
    path: Vec<String>,
}

/// A name a module brings in with `use`, and the path it names.
#[derive(Debug, Clone)]
struct Alias {
    module: ModulePath,
    path: Vec<String>,
}

/// A crate's modules and the paths they use, read from its sources.
#[derive(Debug, Default)]
struct Crate {
    files: usize,
    modules: BTreeSet<ModulePath>,
    /// Per module: the names its `use` statements bring in.
    aliases: BTreeMap<ModulePath, BTreeMap<String, Alias>>,
    references: Vec<Reference>,
}

impl Crate {
    /// Reads the crate whose root file is `dir/root`, following its `mod` declarations.
    fn read(dir: &Path, root: &str) -> Crate {
        Crate::load(root, |relative| std::fs::read_to_string(dir.join(relative)).ok())
    }

    /// Reads a crate from `(path, text)` pairs, as if they were files.
    fn from_files(root: &str, files: &[(&str, &str)]) -> Crate {
        Crate::load(root, |relative| {
            files.iter().find(|(path, _)| *path == relative).map(|(_, text)| (*text).to_owned())
        })
    }

    fn load(root: &str, read: impl Fn(&str) -> Option<String>) -> Crate {
        let mut krate = Crate::default();
        krate.modules.insert(Vec::new());
        // (file, its module, the folder its children's files are in)
        let mut queue: VecDeque<(String, ModulePath, String)> = VecDeque::new();
        queue.push_back((root.to_owned(), Vec::new(), String::new()));
        while let Some((file, module, children_dir)) = queue.pop_front() {
            let text = read(&file).unwrap_or_else(|| panic!("cannot read {file}"));
            krate.files += 1;
            let facts = parse(&text);
            for inline in facts.inline_modules {
                krate.modules.insert(join(&module, &inline));
            }
            for (inline, name) in facts.declared {
                let child = join(&module, &inline).into_iter().chain([name.clone()]).collect::<ModulePath>();
                krate.modules.insert(child.clone());
                let mut dir = children_dir.clone();
                for part in &inline {
                    dir.push_str(part);
                    dir.push('/');
                }
                let flat = format!("{dir}{name}.rs");
                let nested = format!("{dir}{name}/mod.rs");
                if read(&flat).is_some() {
                    queue.push_back((flat, child, format!("{dir}{name}/")));
                } else {
                    queue.push_back((nested, child, format!("{dir}{name}/")));
                }
            }
            for (inline, name, path) in facts.uses {
                let at = join(&module, &inline);
                krate.aliases.entry(at.clone()).or_default().insert(name, Alias { module: at, path });
            }
            for (inline, line, path) in facts.paths {
                krate.references.push(Reference { from: join(&module, &inline), file: file.clone(), line, path });
            }
        }
        krate
    }

    /// The module a path used from `from` names: the module that defines its item, through
    /// `use`s and re-exports. `None` for a path outside the crate.
    fn resolve(&self, from: &[String], path: &[String], hops: usize) -> Option<ModulePath> {
        let mut at: ModulePath;
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                at = Vec::new();
                rest = &rest[1..];
            }
            Some("self" | "super") => {
                at = from.to_vec();
                while let Some(first) = rest.first() {
                    match first.as_str() {
                        "self" => {}
                        "super" => {
                            at.pop()?;
                        }
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            // A `use` without a prefix names a child module, or another crate.
            Some(first) if self.modules.contains(&join(from, &[first.to_owned()])) => at = from.to_vec(),
            _ => return None,
        }
        while let Some(first) = rest.first() {
            let child = join(&at, std::slice::from_ref(first));
            if self.modules.contains(&child) {
                at = child;
            } else if let Some(alias) = self.aliases.get(&at).and_then(|names| names.get(first))
                && hops < 16
                && let Some(target) = self.resolve(&alias.module, &alias.path, hops + 1)
            {
                at = target;
            } else {
                break;
            }
            rest = &rest[1..];
        }
        Some(at)
    }

    /// Every reference with the module it resolves to.
    fn edges(&self) -> Vec<(Reference, ModulePath)> {
        self.references
            .iter()
            .filter_map(|reference| Some((reference.clone(), self.resolve(&reference.from, &reference.path, 0)?)))
            .collect()
    }
}

fn join(module: &[String], inner: &[String]) -> ModulePath {
    module.iter().chain(inner).cloned().collect()
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} uses {}", self.file, self.line, self.path.join("::"))
    }
}

/// Every use in `krate` of a layer above the user's, one line each.
fn layer_violations(krate: &Crate, layers: &[(usize, &str, &[&str])]) -> Vec<String> {
    let layer_of = |module: &str| layers.iter().find(|(_, _, modules)| modules.contains(&module));
    let mut problems = Vec::new();
    for module in krate.modules.iter().filter(|module| module.len() == 1) {
        if layer_of(&module[0]).is_none() {
            problems.push(format!("the top-level module `{}` is in no layer", module[0]));
        }
    }
    for (reference, target) in krate.edges() {
        let (Some(from), Some(to)) = (reference.from.first(), target.first()) else { continue };
        if let (Some((from_rank, from_layer, _)), Some((to_rank, to_layer, _))) = (layer_of(from), layer_of(to))
            && to_rank > from_rank
        {
            problems.push(format!("{reference}: {from_layer} (`{from}`) uses {to_layer} (`{to}`), a layer above"));
        }
    }
    problems
}

/// Every cycle among the children of one module, each named with the uses that make it.
fn cycles(krate: &Crate) -> Vec<String> {
    // Per parent module: child → child → the first use that makes that edge.
    let mut graphs: BTreeMap<ModulePath, BTreeMap<String, BTreeMap<String, Reference>>> = BTreeMap::new();
    for (reference, target) in krate.edges() {
        let from = &reference.from;
        let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
        let (Some(a), Some(b)) = (from.get(common), target.get(common)) else { continue };
        let edges = graphs.entry(from[..common].to_vec()).or_default().entry(a.clone()).or_default();
        edges.entry(b.clone()).or_insert(reference.clone());
    }
    let mut found = Vec::new();
    for (parent, graph) in &graphs {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for start in graph.keys() {
            if seen.contains(start.as_str()) {
                continue;
            }
            let Some(cycle) = shortest_cycle(graph, start) else { continue };
            seen.extend(cycle.iter());
            let names: Vec<&str> = cycle.iter().chain(cycle.first()).copied().collect();
            let uses: Vec<String> =
                cycle.iter().zip(cycle.iter().cycle().skip(1)).map(|(a, b)| format!("  {}", graph[*a][*b])).collect();
            let place = if parent.is_empty() { "crate".to_owned() } else { parent.join("::") };
            found.push(format!("in `{place}`: {}\n{}", names.join(" → "), uses.join("\n")));
        }
    }
    found
}

/// The shortest cycle through `start`, if there is one (breadth first).
fn shortest_cycle<'a>(
    graph: &'a BTreeMap<String, BTreeMap<String, Reference>>,
    start: &'a str,
) -> Option<Vec<&'a str>> {
    let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if next == start {
                let mut cycle = vec![node];
                while let Some(&before) = cycle.last().and_then(|last| previous.get(last)) {
                    cycle.push(before);
                }
                cycle.reverse();
                return Some(cycle);
            }
            if !previous.contains_key(next.as_str()) {
                previous.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

/// What one file says about modules: relative to the file's module, by the inline
/// `mod name { }` blocks it sits in.
#[derive(Debug, Default)]
struct Facts {
    inline_modules: Vec<ModulePath>,
    /// `mod name;`: (the inline module it is in, name).
    declared: Vec<(ModulePath, String)>,
    /// `use`: (inline module, the name it brings in, the path).
    uses: Vec<(ModulePath, String, Vec<String>)>,
    /// Every `crate::`/`super::`/`self::` path: (inline module, line, path).
    paths: Vec<(ModulePath, usize, Vec<String>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

fn parse(text: &str) -> Facts {
    let tokens = tokenize(text);
    let mut facts = Facts::default();
    // The inline modules we are in, with the brace depth each one's body is at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut test_only = false;
    let ident = |i: usize| match tokens.get(i) {
        Some((Token::Ident(name), _)) => Some(name.as_str()),
        _ => None,
    };
    let is = |i: usize, token: Token| tokens.get(i).map(|(t, _)| t) == Some(&token);
    let current = |inline: &Vec<(String, usize)>| inline.iter().map(|(name, _)| name.clone()).collect::<ModulePath>();
    let mut i = 0;
    while i < tokens.len() {
        // Attributes: `#[cfg(test)]` (or `cfg(all(test, ...))`) hides the item after it.
        if is(i, Token::Punct('#')) && (is(i + 1, Token::Punct('[')) || is(i + 1, Token::Punct('!'))) {
            let open = if is(i + 1, Token::Punct('!')) { i + 2 } else { i + 1 };
            let end = matching(&tokens, open);
            let inner: Vec<&Token> = tokens[open + 1..end].iter().map(|(t, _)| t).collect();
            if inner.first() == Some(&&Token::Ident("cfg".into()))
                && inner.contains(&&Token::Ident("test".into()))
                && !inner.contains(&&Token::Ident("not".into()))
            {
                test_only = true;
            }
            i = end + 1;
            continue;
        }
        if test_only {
            i = skip_item(&tokens, i);
            test_only = false;
            continue;
        }
        match &tokens[i].0 {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, at)| *at > depth) {
                    inline.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(name) = ident(i + 1) {
                    if is(i + 2, Token::Punct(';')) {
                        facts.declared.push((current(&inline), name.to_owned()));
                    } else if is(i + 2, Token::Punct('{')) {
                        inline.push((name.to_owned(), depth + 1));
                        facts.inline_modules.push(current(&inline));
                        depth += 1;
                        i += 3;
                        continue;
                    }
                }
            }
            // `use` starts an import; `use<'a>` (precise capturing) does not.
            Token::Ident(word) if word == "use" && !is(i + 1, Token::Punct('<')) => {
                let end = (i..tokens.len()).find(|&j| is(j, Token::Punct(';'))).unwrap_or(tokens.len());
                for (path, name, line) in use_tree(&tokens[i + 1..end]) {
                    if matches!(path.first().map(String::as_str), Some("crate" | "super" | "self")) {
                        facts.paths.push((current(&inline), line, path.clone()));
                    }
                    if let Some(name) = name {
                        facts.uses.push((current(&inline), name, path));
                    }
                }
                i = end + 1;
                continue;
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && is(i + 1, Token::PathSep)
                    && !(i > 0
                        && (is(i - 1, Token::Punct('$'))
                            || is(i - 1, Token::PathSep)
                            || ident(i - 1) == Some("in"))) =>
            {
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while is(j, Token::PathSep)
                    && let Some(next) = ident(j + 1)
                {
                    path.push(next.to_owned());
                    j += 2;
                }
                facts.paths.push((current(&inline), tokens[i].1, path));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    facts
}

/// The index of the bracket that closes the one at `open` (or the last token).
fn matching(tokens: &[(Token, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, (token, _)) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    tokens.len().saturating_sub(1)
}

/// The index after the item that starts at `start`: after its `;`, or after its body's
/// closing brace, whichever ends it; stops before a brace that closes an enclosing block.
fn skip_item(tokens: &[(Token, usize)], start: usize) -> usize {
    let mut depth = 0usize;
    for (j, (token, _)) in tokens.iter().enumerate().skip(start) {
        match token {
            Token::Punct(';') if depth == 0 => return j + 1,
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                if depth == 0 {
                    return j;
                }
                depth -= 1;
                if depth == 0 && *token == Token::Punct('}') {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The leaves of a `use` tree: each path, the name it brings in (`None` for `*`), and the
/// line of its last segment.
fn use_tree(tokens: &[(Token, usize)]) -> Vec<(Vec<String>, Option<String>, usize)> {
    let mut leaves = Vec::new();
    let mut i = 0;
    read_tree(tokens, &mut i, &[], &mut leaves);
    leaves
}

fn read_tree(
    tokens: &[(Token, usize)],
    i: &mut usize,
    prefix: &[String],
    leaves: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    let mut path = prefix.to_vec();
    let mut line = 0;
    while let Some((token, at)) = tokens.get(*i) {
        match token {
            Token::Ident(word) if word == "as" => {
                *i += 1;
                let name = match tokens.get(*i) {
                    Some((Token::Ident(name), _)) if name != "_" => Some(name.clone()),
                    _ => None,
                };
                leaves.push((path.clone(), name, line));
                path = prefix.to_vec();
            }
            Token::Ident(word) => {
                line = *at;
                path.push(word.clone());
            }
            Token::PathSep => {}
            Token::Punct('*') => {
                leaves.push((path.clone(), None, line));
                path = prefix.to_vec();
            }
            Token::Punct('{') => {
                *i += 1;
                read_tree(tokens, i, &path, leaves);
                path = prefix.to_vec();
            }
            Token::Punct(',') => {
                push_leaf(&mut path, prefix, line, leaves);
            }
            Token::Punct('}') => break,
            Token::Punct(_) => {}
        }
        *i += 1;
    }
    push_leaf(&mut path, prefix, line, leaves);
}

fn push_leaf(
    path: &mut Vec<String>,
    prefix: &[String],
    line: usize,
    leaves: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    if path.len() > prefix.len() {
        let mut leaf = std::mem::replace(path, prefix.to_vec());
        // `a::b::{self}` brings in `b`.
        if leaf.last().map(String::as_str) == Some("self") && leaf.len() > 1 {
            leaf.pop();
        }
        let name = leaf.last().cloned();
        leaves.push((leaf, name, line));
    } else {
        *path = prefix.to_vec();
    }
}

/// Rust source as identifiers, `::` and punctuation, each with its line; comments,
/// literals and lifetimes dropped.
fn tokenize(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut nesting = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    nesting += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    nesting -= 1;
                    i += 2;
                    if nesting == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1, &mut line);
        } else if c == '\'' {
            if at(i + 1) == '\\' {
                // An escaped character: up to its closing quote.
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime or a label: its name is dropped with it.
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let hashes = (i..).take_while(|&k| at(k) == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && at(i + hashes) == '"' {
                // A raw string: `r#"...."#`.
                i += hashes + 1;
                while i < chars.len() && !(chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#')) {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
                i += hashes + 1;
            } else if word == "r" && hashes == 1 {
                // A raw identifier: `r#type`.
                i += 1;
                let start = i;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
                tokens.push((Token::Ident(chars[start..i].iter().collect()), line));
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_string(&chars, i + 1, &mut line);
            } else if word == "b" && at(i) == '\'' {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += usize::from(chars[i] == '\\') + 1;
                }
                i += 1;
            } else if !word.starts_with(|c: char| c.is_ascii_digit()) {
                tokens.push((Token::Ident(word), line));
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), line));
            i += 1;
        }
    }
    tokens
}

/// The index after the string whose contents start at `i`.
fn skip_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < chars.len() && chars[i] != '"' {
        if chars[i] == '\\' {
            i += 1;
        }
        *line += usize::from(chars.get(i) == Some(&'\n'));
        i += 1;
    }
    i + 1
}

// The checker's own tests: small crates written inline, each with a planted problem.

fn edges_of(krate: &Crate) -> Vec<String> {
    krate
        .edges()
        .into_iter()
        .map(|(reference, target)| {
            format!("{}:{} {} -> {}", reference.file, reference.line, reference.from.join("::"), target.join("::"))
        })
        .collect()
}

#[test]
fn nested_use_groups_and_inline_paths_are_all_read() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
            ("a.rs", "use crate::{b::{self, Thing}, c::{d as e}};\nfn f() { crate::d::g(); }\n"),
            ("b.rs", "pub struct Thing;"),
            ("c.rs", "pub fn d() {}"),
            ("d.rs", "pub fn g() {}"),
        ],
    );
    assert_eq!(edges_of(&krate), ["a.rs:1 a -> b", "a.rs:1 a -> b", "a.rs:1 a -> c", "a.rs:2 a -> d"]);
}

#[test]
fn re_exports_resolve_to_the_module_that_defines_the_item() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod a;\npub mod b;\npub use b::deep::Thing;\n"),
            ("a.rs", "fn f() -> crate::Thing { todo!() }\n"),
            ("b/mod.rs", "pub mod deep;\n"),
            ("b/deep.rs", "pub struct Thing;\n"),
        ],
    );
    assert_eq!(edges_of(&krate), ["a.rs:1 a -> b::deep"]);
}

#[test]
fn comments_strings_and_test_code_are_not_read() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod a;\npub mod b;\n#[cfg(test)]\nmod tests;\n"),
            (
                "a.rs",
                "//! [`crate::b`]\n/* crate::b::x */\nconst S: &str = \"crate::b::x\";\nconst R: &str = r#\"crate::b\"#;\n\
                 fn f<'a>(c: &'a char) -> char { '\"' }\n#[cfg(test)]\nmod tests { use crate::b; }\n\
                 #[cfg(test)]\nuse crate::b::Thing;\n",
            ),
            ("b.rs", "pub struct Thing;"),
        ],
    );
    assert_eq!(edges_of(&krate), Vec::<String>::new());
}

#[test]
fn inline_modules_and_super_resolve_from_where_they_are_written() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod a;\npub mod b;\n"),
            ("a.rs", "pub mod inner {\n    use super::super::b::Thing;\n}\npub fn f() { self::inner::g(); }\n"),
            ("b.rs", "pub struct Thing;"),
        ],
    );
    assert_eq!(edges_of(&krate), ["a.rs:2 a::inner -> b", "a.rs:4 a -> a::inner"]);
}

#[test]
fn an_import_from_a_layer_above_is_reported_with_its_line_and_layers() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod model;\npub mod api;\n"),
            ("model.rs", "pub struct Id;\n\nuse crate::api::Route;\n"),
            ("api.rs", "use crate::model::Id;\npub struct Route;\n"),
        ],
    );
    let layers: &[(usize, &str, &[&str])] = &[(0, "model", &["model"]), (1, "api", &["api"])];
    assert_eq!(
        layer_violations(&krate, layers),
        ["model.rs:3 uses crate::api::Route: model (`model`) uses api (`api`), a layer above"]
    );
}

#[test]
fn a_top_level_module_outside_the_layers_is_reported() {
    let krate = Crate::from_files(
        "lib.rs",
        &[("lib.rs", "pub mod model;\npub mod stray;\n"), ("model.rs", ""), ("stray.rs", "")],
    );
    let layers: &[(usize, &str, &[&str])] = &[(0, "model", &["model"])];
    assert_eq!(layer_violations(&krate, layers), ["the top-level module `stray` is in no layer"]);
}

#[test]
fn a_cycle_between_siblings_is_reported_at_their_common_parent() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod top;\n"),
            ("top/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("top/a/mod.rs", "pub mod deep;\n"),
            ("top/a/deep.rs", "use crate::top::b::f;\n"),
            ("top/b.rs", "pub fn f() { super::c::g() }\n"),
            ("top/c.rs", "pub fn g() {}\nuse super::a::deep;\n"),
        ],
    );
    assert_eq!(
        cycles(&krate),
        ["in `top`: a → b → c → a\n  top/a/deep.rs:1 uses crate::top::b::f\n  top/b.rs:1 uses super::c::g\n  \
          top/c.rs:2 uses super::a::deep"]
    );
}

#[test]
fn a_module_using_its_parent_or_its_child_is_no_cycle() {
    let krate = Crate::from_files(
        "lib.rs",
        &[
            ("lib.rs", "pub mod a;\npub struct Root;\n"),
            ("a/mod.rs", "pub mod b;\npub struct Thing;\nuse self::b::Other;\n"),
            ("a/b.rs", "use super::Thing;\nuse crate::Root;\npub struct Other;\n"),
        ],
    );
    assert_eq!(cycles(&krate), Vec::<String>::new());
    assert_eq!(edges_of(&krate).len(), 3);
}
