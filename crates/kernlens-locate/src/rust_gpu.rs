//! Rust GPU kernels (locate.md "What a hit proves", optional): functions of a `.rs` file, parsed with
//! `syn`, marked as kernels by `#[cube(launch)]` / `#[cube(launch_unchecked)]`
//! (CubeCL), `#[kernel]` (rust-cuda) or `#[spirv(...)]` entry points (rust-gpu).

use syn::{ImplItem, Item};

/// One function of a Rust file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RustFn {
    pub name: String,
    pub kernel: bool,
}

/// Every function of a Rust file (free, in inline modules and in impls); an
/// unparsable file gives none, so its hits stay mentions.
pub(crate) fn functions(bytes: &[u8]) -> Vec<RustFn> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect(&file.items, &mut out);
    out
}

fn collect(items: &[Item], out: &mut Vec<RustFn>) {
    for item in items {
        match item {
            Item::Fn(f) => out.push(RustFn {
                name: f.sig.ident.to_string(),
                kernel: f.attrs.iter().any(is_kernel_attr),
            }),
            Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, out);
                }
            }
            Item::Impl(i) => {
                for it in &i.items {
                    if let ImplItem::Fn(f) = it {
                        out.push(RustFn {
                            name: f.sig.ident.to_string(),
                            kernel: f.attrs.iter().any(is_kernel_attr),
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_kernel_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    if path.is_ident("kernel") {
        return true;
    }
    let Some(last) = path.segments.last() else {
        return false;
    };
    if last.ident == "spirv" {
        // Any rust-gpu shader entry point (`compute(threads(..))`, `vertex`, …).
        return true;
    }
    if last.ident != "cube" {
        return false;
    }
    let mut launch = false;
    let _ = attr.parse_nested_meta(|meta| {
        if meta.path.is_ident("launch") || meta.path.is_ident("launch_unchecked") {
            launch = true;
        }
        // Skip a value or argument list this check does not need.
        if meta.input.peek(syn::Token![=]) {
            let _: syn::Expr = meta.value()?.parse()?;
        } else if meta.input.peek(syn::token::Paren) {
            let content;
            syn::parenthesized!(content in meta.input);
            let _: proc_macro2_free::Rest = content.parse()?;
        }
        Ok(())
    });
    launch
}

mod proc_macro2_free {
    /// Consumes whatever tokens remain in a parse buffer.
    pub(crate) struct Rest;

    impl syn::parse::Parse for Rest {
        fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
            input.step(|cursor| {
                let mut rest = *cursor;
                while let Some((_, next)) = rest.token_tree() {
                    rest = next;
                }
                Ok((Rest, rest))
            })
        }
    }
}

/// Byte offset of `fn name` (as whole words) in the text.
pub(crate) fn fn_offset(bytes: &[u8], name: &str) -> Option<usize> {
    let offsets = crate::cxx::whole_word_offsets(bytes, name.as_bytes());
    offsets.into_iter().find(|&o| {
        let before = &bytes[..o];
        let trimmed = before.trim_ascii_end();
        trimmed.ends_with(b"fn") && trimmed.len() < before.len()
    })
}
