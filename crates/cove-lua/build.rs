include!("../../stdlib/embed.rs");

fn main() {
    embed_stdlib("lua", ".lua", "", ".");
}
