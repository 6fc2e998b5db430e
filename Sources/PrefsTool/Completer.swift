// Shell completion for `prefsctl`, computed by prefsctl itself: the bash, zsh and fish scripts are small
// wrappers that pass the words typed so far to `prefsctl __complete WORDS… CURRENT` and offer what it prints.
// So the three shells complete alike, from the same verb table as the help, and domains, storage keys and
// entries are listed with the same rules (and the same --directory, --etcd, --system or --managed typed
// earlier on the line) as the command being typed.

import Foundation
import RVS_PersistentPrefs

/// The candidates for the word being typed on a `prefsctl` command line.
package enum Completer {
    /// The first line of the output, instead of candidates, when the shell should complete on its own:
    /// file names, directory names or user names.
    package enum Directive: String {
        case files = ":files", directories = ":directories", users = ":users"
    }

    /// Options every verb takes, and the value-taking ones among them.
    static let commonOptions = ["--directory", "--etcd", "--system", "--managed", "--user", "--dry-run", "--help", "--version"]
    private static let commonValueOptions: Set<String> = ["--directory", "--etcd", "--user"]

    /// Prints the candidates for the last of `words` (the word being typed, possibly empty), one a line.
    package static func run(_ words: [String]) {
        let current = words.last ?? ""
        let before = Array(words.dropLast())
        var forwarded: [String] = []
        var verb: DefaultsVerb?
        var operands: [String] = []
        var index = 0
        while index < before.count {
            let word = before[index]
            if commonValueOptions.contains(word) || DefaultsVerbs.valueOptions.contains(word) {
                if commonValueOptions.contains(word), index + 1 < before.count { forwarded += [word, before[index + 1]] }
                index += 2
                continue
            }
            index += 1
            if word == "--system" || word == "--managed" { forwarded.append(word) }
            if word == "--dry-run" { continue }
            if word.hasPrefix("-") && !(verb != nil && (DomainReference.globalNames.contains(word) || word == "-")) { continue }
            if verb == nil {
                verb = try? DefaultsVerbs.named(word)
                if verb == nil { return }
            } else {
                operands.append(word)
            }
        }
        let candidates: [String]
        switch before.last {
        case "--directory": return say(.directories)
        case "--etcd": return
        case "--user": return say(.users)
        case "--format": candidates = ["xml", "binary", "json", "openstep"]
        case "--as": candidates = ["system", "managed"]
        default:
            guard let verb else {
                candidates = DefaultsVerbs.all.map(\.name) + commonOptions
                break
            }
            if current.hasPrefix("-") && !(verb.takesDomain && operands.isEmpty && current == "-") {
                candidates = verb.options.map(\.word) + commonOptions + (verb.takesDomain && operands.isEmpty ? ["-g"] : [])
                break
            }
            switch verb.completes(afterDomain: operands.count) {
            case .verbs: candidates = DefaultsVerbs.all.map(\.name)
            case .shells: candidates = ["bash", "zsh", "fish"]
            case .files: return say(.files)
            case .nothing: return
            case .domains: candidates = domains(forwarded)
            case .names: candidates = names(forwarded, operands)
            }
        }
        Console.say(candidates.filter { $0.hasPrefix(current) }.joined(separator: "\n"))
    }

    private static func say(_ directive: Directive) { Console.say(directive.rawValue) }

    /// The catalog the command being typed would use.
    private static func inspector(_ forwarded: [String]) -> DomainInspector? {
        var arguments = Arguments(forwarded)
        // No `--directory` (a nil directory: the one the environment gives) is no failure: not a `try?`, which
        // would make it one.
        let directory: String?
        do { directory = try Program.directoryOption(&arguments) } catch { return nil }
        guard let catalog = try? DefaultsInspector.catalog(&arguments, directory: directory) else { return nil }
        return DomainInspector(domains: catalog)
    }

    private static func domains(_ forwarded: [String]) -> [String] {
        Array(Set(((try? inspector(forwarded)?.domains.listing()) ?? []).map(\.name) + SchemaCompletion.domains())).sorted() + ["-g"]
    }

    /// The storage keys of the domain, or the entries of the collection that `operands` name.
    private static func names(_ forwarded: [String], _ operands: [String]) -> [String] {
        let stored = inspector(forwarded).flatMap { try? $0.names(operands) } ?? []
        return Array(Set(stored + SchemaCompletion.names(operands))).sorted()
    }
}

/// What a verb's next operand is, for completion.
package enum OperandCompletion {
    case domains, names, files, verbs, shells, nothing
}

extension DefaultsVerb {
    /// What completes the operand after `count` operands.
    func completes(afterDomain count: Int) -> OperandCompletion {
        switch name {
        case "help": return count == 0 ? .verbs : .nothing
        case "completion": return count == 0 ? .shells : .nothing
        case "verify": return .files
        case "find": return .nothing
        case "export", "import": return count == 0 ? .domains : count == 1 ? .files : .nothing
        case "edit": return count == 0 ? .domains : count == 1 ? .names : .nothing
        case "rename": return count == 0 ? .domains : count == 1 ? .names : .nothing
        default: return !takesDomain ? .nothing : count == 0 ? .domains : .names
        }
    }
}

extension DomainInspector {
    /// The names inside what `operands` (DOMAIN [KEY [ENTRY...]]) name: the domain's storage keys, a stored
    /// dictionary's entries, or an array's indices.
    package func names(_ operands: [String]) throws(HarnessError) -> [String] {
        guard let domain = operands.first else { return try domains.listing().map(\.name) }
        let value: PropertyListValue = operands.count == 1 ? .dictionary(try effectiveContents(of: domain, reporting: false)) : try self.value(operands)
        switch value {
        case .dictionary(let entries): return entries.keys.sorted()
        case .array(let elements): return elements.indices.map(String.init)
        default: return []
        }
    }
}

extension Completer {
    /// The completion script for `shell`: bash, zsh or fish.
    package static func script(for shell: String) throws(HarnessError) -> String {
        switch shell {
        case "bash": return bash
        case "zsh": return zsh
        case "fish": return fish
        default: throw .usage("completion knows bash, zsh and fish, not '\(shell)'")
        }
    }

    /// Installed as /usr/share/bash-completion/completions/prefsctl.
    static let bash = """
        # bash completion for prefsctl (RVS_PersistentPrefs), made by `prefsctl completion bash`.
        # prefsctl itself computes the candidates from the words typed so far: verbs, options, domains, storage
        # keys and entries, with the --directory, --etcd, --system or --managed given earlier on the line.
        _prefsctl() {
            local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\\n'
            local -a reply
            reply=($(prefsctl __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null))
            case ${reply[0]-} in
                :files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
                :directories) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
                :users) COMPREPLY=($(compgen -u -- "$cur")) ;;
                *) COMPREPLY=("${reply[@]}") ;;
            esac
        }
        complete -F _prefsctl prefsctl

        """

    /// Installed as /usr/share/zsh/vendor-completions/_prefsctl.
    static let zsh = """
        #compdef prefsctl
        # zsh completion for prefsctl (RVS_PersistentPrefs), made by `prefsctl completion zsh`; prefsctl itself
        # computes the candidates from the words typed so far.
        _prefsctl() {
            local -a reply
            reply=(${(f)"$(prefsctl __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)"})
            case ${reply[1]-} in
                :files) _files ;;
                :directories) _files -/ ;;
                :users) _users ;;
                *) (( ${#reply} )) && compadd -Q -- "${reply[@]}" ;;
            esac
        }
        _prefsctl "$@"

        """

    /// Installed as /usr/share/fish/vendor_completions.d/prefsctl.fish.
    static let fish = """
        # fish completion for prefsctl (RVS_PersistentPrefs), made by `prefsctl completion fish`; prefsctl itself
        # computes the candidates from the words typed so far.
        function __prefsctl_complete
            set -l words (commandline -opc)
            set -e words[1]
            set -l current (commandline -ct)
            set -l reply (prefsctl __complete $words "$current" 2>/dev/null)
            switch "$reply[1]"
                case :files
                    __fish_complete_path "$current"
                case :directories
                    __fish_complete_directories "$current"
                case :users
                    __fish_complete_users
                case '*'
                    printf '%s\\n' $reply
            end
        end
        complete -c prefsctl -f -a '(__prefsctl_complete)'

        """
}
