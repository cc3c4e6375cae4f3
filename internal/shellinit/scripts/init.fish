# termkeep shell integration for fish, sourced by --init-command once fish
# has read its own configuration: OSC 7 (working directory), OSC 133
# (prompt and command marks) and the session's own history file. It adds
# event handlers beside the user's, prints nothing but escape sequences,
# and is safe to source twice.

status is-interactive; or return

# The paths stay shell variables: programs the user starts need not see them.
if set -q TERMKEEP_HISTFILE
    set -g __termkeep_histfile $TERMKEEP_HISTFILE
    set -e TERMKEEP_HISTFILE
end
if set -q TERMKEEP_FISH_HISTORY
    set -g __termkeep_fish_history $TERMKEEP_FISH_HISTORY
    set -e TERMKEEP_FISH_HISTORY
end

# History. fish keeps its history by name, in its data directory, and
# (before fish 4) cannot add entries from a file. So the session gets a
# name of its own (fish_history, from TERMKEEP_FISH_HISTORY), which gives
# `history` and the up-arrow, and every command line is also appended to
# the session's history file, one line each with fish's own escapes (\\
# and \n). When fish's file for the name is missing (the data directory
# was wiped, or the session moved), it is rebuilt from the session's file.
if set -q __termkeep_fish_history[1]; and test "$fish_history" != "$__termkeep_fish_history"
    set -l data $__fish_user_data_dir
    if not set -q data[1]
        if set -q XDG_DATA_HOME[1]
            set data $XDG_DATA_HOME/fish
        else
            set data ~/.local/share/fish
        end
    end
    set -l native $data/$__termkeep_fish_history"_history"
    if not test -e $native; and set -q __termkeep_histfile[1]; and test -s $__termkeep_histfile
        mkdir -p $data
        while read -l line
            printf '%s\n' "- cmd: $line"
        end <$__termkeep_histfile >$native
    end
    set -g fish_history $__termkeep_fish_history
end

# fish 4 marks prompts and commands itself; adding ours would double them.
set -g __termkeep_marks 1
test (string split -f1 . -- $version) -ge 4 2>/dev/null; and set -g __termkeep_marks 0

# __termkeep_osc7 reports the working directory, percent-encoded (all but
# unreserved characters and '/').
function __termkeep_osc7
    if test "$PWD" != "$__termkeep_pwd"
        set -g __termkeep_pwd $PWD
        set -g __termkeep_url (string escape --style=url -- $PWD)
    end
    printf '\e]7;file://%s%s\e\\' $hostname $__termkeep_url
end

function __termkeep_prompt --on-event fish_prompt
    __termkeep_osc7
    test $__termkeep_marks = 1; and printf '\e]133;A\a'
end

function __termkeep_preexec --on-event fish_preexec
    test $__termkeep_marks = 1; and printf '\e]133;C\a'
end

function __termkeep_postexec --on-event fish_postexec
    set -l st $status
    test $__termkeep_marks = 1; and printf '\e]133;D;%s\a' $st
    # Lines fish keeps out of its history (a leading space) stay out of ours.
    if set -q __termkeep_histfile[1]; and string length -q -- $argv[1]; and not string match -q -- ' *' $argv[1]
        string split \n -- $argv[1] | string replace -a -- '\\' '\\\\' | string join '\\n' >>$__termkeep_histfile
    end
end

# The end of the prompt (133;B) follows the user's fish_prompt, wrapped once.
if test $__termkeep_marks = 1; and functions -q fish_prompt; and not functions -q __termkeep_user_prompt
    functions -c fish_prompt __termkeep_user_prompt
    function fish_prompt
        __termkeep_user_prompt
        printf '\e]133;B\a'
    end
end
