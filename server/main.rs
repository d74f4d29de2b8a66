//! The `journal` binary: parses the command line and hands over to `journal::cli`.

fn main() -> std::process::ExitCode {
    journal::cli::main()
}
