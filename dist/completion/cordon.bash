# bash completion for cordon(1).  The command list matches `cordon help`
# (tests/host/install.sh checks it).
_cordon()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    }
    local commands="run pending approve deny intent stop doctor policy floor audit home mcp-proxy mcp-bridge http-proxy connect unix-connector version"
    local profiles="coding-agent strict mcp-server"
    local i cmd=
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            -v) ;;
            *) cmd=${words[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "-v $commands help" -- "$cur"))
        return
    fi
    # `cordon help COMMAND`
    if [[ $cmd == help ]]; then
        ((cword == i + 1)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case $prev in
        --profile) COMPREPLY=($(compgen -W "$profiles" -- "$cur")); return ;;
        --policy|--audit|--mcp|--servers|--key|--port-file|--upstream-ca|--config|--anchor|--audit-syslog)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --workspace|--key-dir|--dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        --approve) COMPREPLY=($(compgen -W "tty socket deny" -- "$cur")); return ;;
    esac
    local opts=
    case $cmd in
        run) opts="--profile --policy --workspace --user --approve --audit --audit-syslog --audit-journal --require-full-floor --env --var --keep-fd --upstream --upstream-ca --mcp -q -v --help --" ;;
        pending) opts="--all --json --help" ;;
        intent) opts="--for --list --revoke --json --help" ;;
        approve) opts="--session --help" ;;
        deny|stop|connect|mcp-bridge) opts="--help" ;;
        version) opts="--json --help" ;;
        doctor) opts="--json --help" ;;
        policy)
            if ((cword == i + 1)); then opts="check explain test compile json draft"
            elif [[ ${words[i+1]} == draft ]]; then opts="--model --endpoint --upstream-ca --output --yes --help"
            else opts="--strict --var --json --english $profiles"; fi ;;
        floor) ((cword == i + 1)) && opts="status load unload gc" || opts="--json --help" ;;
        audit)
            if ((cword == i + 1)); then opts="verify show prune"
            elif [[ ${words[i + 1]} == prune ]]; then
                opts="--max-age --max-count --max-size --dry-run --json --config --dir --key-dir --help"
            else opts="--key --key-dir --anchor --json --help"; fi ;;
        home) ((cword == i + 1)) && opts="diff apply discard" || opts="--user --profile --json" ;;
        mcp-proxy) opts="--servers --policy --workspace --user --listen --audit --var --help" ;;
        http-proxy) opts="--listen --port-file --policy --workspace --user --audit --head-timeout --idle-timeout --var --upstream-ca --help" ;;
    esac
    if [[ -n $opts ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    fi
    [[ $cur == -* || -n ${COMPREPLY[*]} ]] || COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _cordon cordon
