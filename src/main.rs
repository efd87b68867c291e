fn main() {
    std::process::exit(morc::cli::main());
}
