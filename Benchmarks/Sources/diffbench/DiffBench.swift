import ArgumentParser
import DiffBenchKit
import Foundation

@main
struct DiffBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diffbench",
        abstract: "DiffEngine's benchmark and keyed file differ.",
        subcommands: [RunCommand.self, DiffCommand.self, FilesCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Usage mistakes exit with status 2 and one line on stderr, like unreadable input.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue) // the command already said why
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) } // --help, --version
            var message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            FileHandle.standardError.write(Data("diffbench: \(message)\n".utf8))
            Foundation.exit(2)
        }
    }
}
