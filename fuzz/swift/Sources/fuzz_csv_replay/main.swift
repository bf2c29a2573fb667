// Replays corpus files and folders through the CSV parser target without libFuzzer.
import FuzzTargets

replayCorpus(Array(CommandLine.arguments.dropFirst()), through: fuzzCSV)
