# termkeep shell integration for zsh, loaded after the user's startup
# files: OSC 7 (working directory), OSC 133 (prompt and command marks) and
# the session's own history file. It adds hooks beside the user's, prints
# nothing but escape sequences, and is safe to source twice.

# The history file. Set after the user's files so they cannot redirect it;
# zsh reads it once all startup files have run. Each command line is added
# as it is entered (a shell killed by a reboot loses nothing), and zsh's
# default sizes (30 lines, none saved) are raised. The path stays a shell
# variable: programs the user starts need not see it.
if [[ -n ${TERMKEEP_HISTFILE-} ]]; then
	typeset -g __termkeep_histfile="$TERMKEEP_HISTFILE"
	builtin unset TERMKEEP_HISTFILE
fi
if [[ -n ${__termkeep_histfile-} ]]; then
	HISTFILE="$__termkeep_histfile"
	(( HISTSIZE >= 10000 )) || HISTSIZE=10000
	(( SAVEHIST >= 10000 )) || SAVEHIST=10000
	[[ -o share_history || -o inc_append_history_time ]] || builtin setopt inc_append_history
fi

# Set by preexec, cleared by precmd; kept when this file is sourced again.
(( ${+__termkeep_running} )) || typeset -gi __termkeep_running=0

# __termkeep_osc7 reports the working directory, its path percent-encoded
# byte by byte (all but unreserved characters and '/').
__termkeep_osc7() {
	emulate -L zsh
	if [[ $PWD != "${__termkeep_pwd-}" ]]; then
		setopt no_multibyte
		local LC_ALL=C c url=
		local -i i
		for (( i = 1; i <= $#PWD; i++ )); do
			c=$PWD[i]
			if [[ $c == [a-zA-Z0-9/._~-] ]]; then
				url+=$c
			else
				url+=%${(l:2::0:)$(( [##16] #c ))}
			fi
		done
		typeset -g __termkeep_pwd=$PWD __termkeep_url=$url
	fi
	print -rn -- $'\e]7;file://'"$HOST$__termkeep_url"$'\e\\'
}

# __termkeep_precmd_first runs first of the precmd hooks: it ends the
# command (133;D with its status) if one ran, so that what the user's
# hooks print is not taken for the command's output, and reports the
# directory the command left.
__termkeep_precmd_first() {
	local -i ret=$?
	emulate -L zsh
	if (( __termkeep_running )); then
		__termkeep_running=0
		print -rn -- $'\e]133;D;'"$ret"$'\a'
	fi
	__termkeep_osc7
	return ret
}

# __termkeep_precmd runs last: it reports the directory again (a hook may
# have changed it) and marks the prompt (133;A) and its end (133;B) in
# PS1, again whenever the user's hooks have rebuilt PS1 without them.
__termkeep_precmd() {
	emulate -L zsh
	__termkeep_osc7
	if [[ $PS1 != *$'%{\e]133;A\a%}'* ]]; then
		PS1=$'%{\e]133;A\a%}'"$PS1"$'%{\e]133;B\a%}'
	fi
}

# __termkeep_preexec marks the start of the command's output (133;C).
__termkeep_preexec() {
	emulate -L zsh
	print -rn -- $'\e]133;C\a'
	__termkeep_running=1
}

() {
	emulate -L zsh
	(( ${precmd_functions[(Ie)__termkeep_precmd_first]} )) || precmd_functions=(__termkeep_precmd_first $precmd_functions)
	(( ${precmd_functions[(Ie)__termkeep_precmd]} )) || precmd_functions+=(__termkeep_precmd)
	(( ${preexec_functions[(Ie)__termkeep_preexec]} )) || preexec_functions+=(__termkeep_preexec)
}
