import ArgumentParser
import Foundation

@main
struct DiffBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diffbench",
        abstract: "DiffEngine's benchmark and keyed file differ.",
        subcommands: [RunCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Usage mistakes exit with status 2 and one line on stderr, like unreadable input.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success || code.rawValue == 1 { exit(withError: error) }
            let message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            FileHandle.standardError.write(Data("diffbench: \(message)\n".utf8))
            Foundation.exit(2)
        }
    }
}
