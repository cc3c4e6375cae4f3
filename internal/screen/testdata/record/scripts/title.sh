# OSC 0/1/2, BEL or ST, and the title stack.
printf '\033]0;first via OSC 0\007'
printf 'text\n'
printf '\033]2;second via OSC 2 and ST\033\\'
printf '\033]1;icon name only\007'
printf '\033[22;0t'                    # push
printf '\033]2;pushed over\007'
printf '\033[23;0t'                    # pop
printf 'more text\n'
printf '\033]2;ünïcödé 中文 title\007'
printf '\033]2;split over\0337'        # ESC 7 inside an OSC? no: ESC ends it
printf 'after\n'
printf '\033]2;final title\033\\done\n'
