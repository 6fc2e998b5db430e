import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("harness share, an app and its helper sharing one group suite")
struct HarnessShareTests {
    let sandbox = HarnessSandbox()

    func conversation() throws -> [String: PropertyListValue] {
        try #require(try sandbox.domain("group.com.example.harness", in: "GroupContainer")["Conversation"]?.dictionaryValue)
    }

    @Test("harness share starts the helper as a second process; values go both ways through the group suite")
    func appStartsHelper() throws {
        let run = try sandbox.run(["share", "--directory", sandbox.path])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let appTurn = try #require(try conversation()["appTurn"])
        guard case .integer(let turn) = appTurn else { Issue.record("appTurn is \(appTurn)"); return }
        // The helper is another process: the app's turn number is its own process ID, and the helper says so.
        #expect(run.lines.contains("helper: sees appSays = \"Hello from the app\" (turn \(turn))"))
        #expect(run.lines.contains { $0.hasPrefix("app: sees helperSays = \"Hello back from the helper\"") })
        let helperLine = try #require(run.lines.firstIndex { $0.hasPrefix("helper: sees") })
        let appLine = try #require(run.lines.firstIndex { $0.hasPrefix("app: sees") })
        #expect(helperLine < appLine)
        #expect(try conversation() == [
            "appSays": .string("Hello from the app"), "appTurn": .integer(turn),
            "helperSays": .string("Hello back from the helper"), "helperAnswered": .integer(turn),
        ])
    }

    @Test("--role helper and --role app, started as two separate processes, find each other through the suite")
    func twoTerminals() throws {
        let helper = try ChildProcess("harness", ["share", "--role", "helper", "--directory", sandbox.path, "--timeout", "30"], environment: sandbox.environment)
        // The helper says it is waiting before it starts checking the suite.
        #expect(helper.readLine()?.hasPrefix("helper: waiting up to 30 seconds for the app") == true)
        let app = try sandbox.run(["share", "--role", "app", "--directory", sandbox.path, "--timeout", "30"])
        #expect(app.status == 0, "app: \(app.errors)")
        let helperOutput = helper.readAllOutput()
        #expect(helper.wait() == 0, "helper: \(helper.readErrors())")
        #expect(helperOutput.contains("helper: sees appSays = \"Hello from the app\""))
        #expect(app.lines.contains { $0.hasPrefix("app: sees helperSays = \"Hello back from the helper\"") })
        let conversation = try conversation()
        #expect(conversation["helperAnswered"] == conversation["appTurn"])
    }

    @Test("A side run alone gives up after --timeout with one clear line and a non-zero exit")
    func aloneTimesOut() throws {
        let helper = try sandbox.run(["share", "--role", "helper", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(helper.status == 1)
        #expect(helper.errorLines.count == 1)
        #expect(helper.errorLines.first?.hasPrefix("harness share: no message from the app within 0.2 seconds") == true)

        let app = try sandbox.run(["share", "--role", "app", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(app.status == 1)
        #expect(app.errorLines.first?.hasPrefix("harness share: no answer from the helper within 0.2 seconds") == true)
        // The app took its unanswered message back, so that a helper started later does not answer it.
        #expect(try conversation()["appTurn"] == nil)
    }

    @Test("--role phone and --role watch, the names of earlier versions, still run the app and the helper")
    func earlierRoleNamesAreAccepted() throws {
        let helper = try sandbox.run(["share", "--role", "watch", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(helper.status == 1, "\(helper.errors)")
        #expect(helper.errorLines.first?.hasPrefix("harness share: no message from the app within 0.2 seconds") == true)
        let app = try sandbox.run(["share", "--role", "phone", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(app.status == 1, "\(app.errors)")
        #expect(app.errorLines.first?.hasPrefix("harness share: no answer from the helper within 0.2 seconds") == true)
    }
}
