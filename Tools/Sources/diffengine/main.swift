import DiffEngineCommand

DiffEngineCommand.runAsProgram(name: "diffengine")
