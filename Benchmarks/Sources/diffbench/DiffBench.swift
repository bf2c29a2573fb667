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
            DiffEngineCommand.runAsProgram(name: "diffengine", arguments: Array(CommandLine.arguments.dropFirst(2)))
        }
        runAsProgram(name: "diffbench")
    }
}
