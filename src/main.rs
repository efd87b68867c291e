fn main() {
    println!("morc");
}
