import ArgumentParser
import DiffBenchKit
import DiffEngineCommand
import Foundation

@main
struct DiffBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diffbench",
        abstract: "DiffEngine's benchmark (`diffbench diff` is `diffengine`, the keyed table differ).",
        subcommands: [RunCommand.self, FilesCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Usage mistakes exit with status 2 and one line on stderr, like unreadable input.
    static func main() {
        // `diffbench diff …` is the table differ under its old name.
        if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "diff" {
            DiffEngineCommand.runAsProgram(arguments: Array(CommandLine.arguments.dropFirst(2)))
        }
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
