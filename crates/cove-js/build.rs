include!("../../stdlib/embed.rs");

fn main() {
    embed_stdlib("js", ".js", "hull:", ":");
}
