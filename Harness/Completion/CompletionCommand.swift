// `harness completion bash|zsh`: a shell completion script, made from the same tables as the help.
//
// The verbs and their options come from DefaultsVerbs; domain names are asked of the harness itself
// (`harness defaults domains --lines`) when the shell completes, so that they follow the same directory
// rules as the library, a `--directory` typed earlier on the line included.

import PrefsTool

enum CompletionCommand: Subcommand {
    static let name = "completion"
    static let summary = "print a bash or zsh completion script: eval \"$(harness completion bash)\""

    static let usage = """
        usage: harness completion bash|zsh

        Prints a script that completes harness's subcommands, the verbs and options of `harness defaults`,
        and domain names from the preferences directory (or from --directory, when typed before).

        Examples:
          eval "$(harness completion bash)"                       # in ~/.bashrc
          harness completion zsh > ~/.zfunc/_harness              # with fpath+=(~/.zfunc) in ~/.zshrc
        """

    static func run(_ arguments: Arguments, _ context: HarnessContext) throws {
        var arguments = arguments
        let shell = try arguments.next(orComplain: "completion needs a shell: bash or zsh")
        try arguments.finish { "completion takes one shell, not '\($0)'" }
        switch shell {
        case "bash": Console.write(bashScript)
        case "zsh": Console.write(zshScript)
        default: throw HarnessError.usage("completion knows bash and zsh, not '\(shell)'")
        }
    }

    /// Words of the shell's syntax, joined by spaces.
    private static func words(_ list: [String]) -> String { list.joined(separator: " ") }

    private static var subcommandNames: [String] { Subcommands.all.map { $0.name } + ["help"] }

    /// `case` arms giving each verb's options, and whether it takes a domain.
    private static func verbOptionsCase(indent: String) -> String {
        DefaultsVerbs.all.map { verb in
            "\(indent)\(verb.name)) opts=\"\(words(verb.options.map(\.word) + ["--help"]))\"; takes_domain=\(verb.takesDomain ? 1 : 0) ;;"
        }.joined(separator: "\n")
    }

    static var bashScript: String {
        """
        # bash completion for harness (RVS_PersistentPrefs), made by `harness completion bash`.
        _harness() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
            local i word subcommand="" verb="" verb_at=0 directory=""
            for ((i = 1; i < COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                if [[ $word == --directory ]]; then directory=${COMP_WORDS[i+1]}; ((i++)); continue; fi
                [[ $word == -* ]] && continue
                if [[ -z $subcommand ]]; then subcommand=$word
                elif [[ $subcommand == defaults && -z $verb ]]; then verb=$word; verb_at=$i; fi
            done
            if [[ $prev == --directory ]]; then COMPREPLY=($(compgen -d -- "$cur")); return; fi
            if [[ -z $subcommand ]]; then
                COMPREPLY=($(compgen -W "\(words(subcommandNames)) --directory --help --version" -- "$cur")); return
            fi
            case $subcommand in
                completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return ;;
                defaults) ;;
                *) COMPREPLY=($(compgen -W "--directory --help" -- "$cur")); return ;;
            esac
            if [[ -z $verb ]]; then
                COMPREPLY=($(compgen -W "\(words(DefaultsVerbs.all.map(\.name))) --directory --help --version" -- "$cur")); return
            fi
            local opts="" takes_domain=0
            case $verb in
        \(verbOptionsCase(indent: "        "))
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); return; fi
            case $prev in
                --format) COMPREPLY=($(compgen -W "xml binary json openstep" -- "$cur")); return ;;
            esac
            if [[ $verb == help ]]; then COMPREPLY=($(compgen -W "\(words(DefaultsVerbs.all.map(\.name)))" -- "$cur")); return; fi
            if ((takes_domain)) && ((COMP_CWORD == verb_at + 1)); then
                local domains
                domains=$(harness defaults ${directory:+--directory "$directory"} domains --lines 2>/dev/null)
                COMPREPLY=($(compgen -W "-g $domains" -- "$cur")); return
            fi
            COMPREPLY=($(compgen -f -- "$cur"))
        }
        complete -F _harness harness

        """
    }

    static var zshScript: String {
        """
        #compdef harness
        # zsh completion for harness (RVS_PersistentPrefs), made by `harness completion zsh`.
        _harness() {
            local -a subcommands verbs opts
            local i word subcommand="" verb="" verb_at=0 directory="" takes_domain=0
            subcommands=(\(words(subcommandNames)))
            verbs=(\(words(DefaultsVerbs.all.map(\.name))))
            for ((i = 2; i < CURRENT; i++)); do
                word=${words[i]}
                if [[ $word == --directory ]]; then directory=${words[i+1]}; ((i++)); continue; fi
                [[ $word == -* ]] && continue
                if [[ -z $subcommand ]]; then subcommand=$word
                elif [[ $subcommand == defaults && -z $verb ]]; then verb=$word; verb_at=$i; fi
            done
            if [[ ${words[CURRENT-1]} == --directory ]]; then _files -/; return; fi
            if [[ -z $subcommand ]]; then compadd -- $subcommands --directory --help --version; return; fi
            case $subcommand in
                completion) compadd bash zsh; return ;;
                defaults) ;;
                *) compadd -- --directory --help; return ;;
            esac
            if [[ -z $verb ]]; then compadd -- $verbs --directory --help --version; return; fi
            case $verb in
        \(verbOptionsCase(indent: "        ").replacingOccurrences(of: "opts=\"", with: "opts=(").replacingOccurrences(of: "\"; takes", with: "); takes"))
            esac
            if [[ ${words[CURRENT]} == -* ]]; then compadd -- $opts; return; fi
            if [[ ${words[CURRENT-1]} == --format ]]; then compadd xml binary json openstep; return; fi
            if [[ $verb == help ]]; then compadd -- $verbs; return; fi
            if ((takes_domain)) && ((CURRENT == verb_at + 1)); then
                local -a directory_option
                [[ -n $directory ]] && directory_option=(--directory "$directory")
                compadd -- -g ${(f)"$(harness defaults $directory_option domains --lines 2>/dev/null)"}
                return
            fi
            _files
        }
        _harness "$@"

        """
    }
}
