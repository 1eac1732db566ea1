// The Ward policy language, version 1 (../shared/design/language.md).
//
// The grammar is deliberately loose about values: every literal that is not a
// string is one WORD token (an address, a CIDR, a port range, a size, a name),
// classified and type-checked after parsing. That turns "a CIDR where a port
// is expected" into a precise semantic diagnostic instead of a syntax error.
grammar Ward;

file_       : header? topItem* EOF ;
header      : WARD version=WORD ;
topItem     : importDecl | letDecl | groupDecl | policyDecl ;

importDecl  : IMPORT STRING ;
letDecl     : LET name=word '=' values ;
groupDecl   : GROUP GROUPREF '=' '[' (groupMember (',' groupMember)* ','?)? ']' ;
groupMember : GROUPREF | word ;

policyDecl  : ABSTRACT? POLICY name=word (EXTENDS word (',' word)*)? '{' section* '}' ;

section
    : DESCRIPTION STRING                         # descriptionSection
    | LABELS '{' labelPair* '}'                  # labelsSection
    | FILESYSTEM '{' fsRule* '}'                 # filesystemSection
    | NETWORK '{' netRule* '}'                   # networkSection
    | SYSCALLS '{' sysItem* '}'                  # syscallsSection
    | PROCESS '{' procItem* '}'                  # processSection
    | LIMITS '{' limitItem* '}'                  # limitsSection
    | TARGET name=word '{' targetToken* '}'      # targetSection
    ;

labelPair   : key=word '=' STRING ','? ;

// filesystem
fsRule      : verdict=(ALLOW | DENY) right+ values ;
right       : READ | WRITE | EXEC ;

// network
netRule
    : verdict=(ALLOW | DENY) UNIX values                                   # unixRule
    | verdict=(ALLOW | DENY) NETLINK values                                # netlinkRule
    | verdict=(ALLOW | DENY) direction=(EGRESS | INGRESS)? protocol=(TCP | UDP | ICMP)?
      (peer=(TO | FROM) peers=values)? ((PORT | PORTS) ports=values)?      # flowRule
    ;

// syscalls
sysItem
    : ARCH word (',' word)*                      # archItem
    | DEFAULT sysAction                          # defaultItem
    | sysAction sysTarget (',' sysTarget)* condition?   # ruleItem
    ;
sysAction   : ALLOW | KILL | KILL_THREAD | TRAP | LOG | NOTIFY | ERRNO errnoValue=WORD ;
sysTarget   : GROUPREF | word ;
condition   : IF cond (AND cond)* ;
cond
    : arg=WORD op=(EQ | NE | LT | LE | GT | GE) expr       # compareCond
    | arg=WORD AMP mask=expr EQ expr                      # maskCond
    | arg=WORD NOT? IN '[' expr (',' expr)* ','? ']'      # inCond
    ;
expr        : WORD (PIPE WORD)* ;

// process and limits
procItem
    : NO_NEW_PRIVILEGES                          # nnpItem
    | CAPABILITIES capMode=(DROP | KEEP) values     # capsItem
    | USER WORD                                  # userItem
    | ENV ALLOW values                           # envItem
    ;
limitItem   : key=word value ;

// target blocks: a flat token sequence, split into entries by the target's
// key table in the checker (keys, values and flag words differ per backend).
targetToken : word | STRING | list | '{' labelPair* '}' ;

values      : value (',' value)* ;
value       : STRING | WORD | ANY | LOOPBACK | list ;
list        : '[' (value (',' value)* ','?)? ']' ;

// Every keyword can also serve as a name (a syscall called `read` or `kill`,
// a policy called `network`), except the few that structure conditions.
word
    : WORD | WARD | IMPORT | LET | GROUP | ABSTRACT | POLICY | EXTENDS
    | DESCRIPTION | LABELS | FILESYSTEM | NETWORK | SYSCALLS | PROCESS | LIMITS
    | TARGET | ALLOW | DENY | READ | WRITE | EXEC | UNIX | NETLINK | EGRESS | INGRESS
    | TCP | UDP | ICMP | TO | FROM | PORT | PORTS | ANY | LOOPBACK | ARCH
    | DEFAULT | KILL | KILL_THREAD | TRAP | LOG | NOTIFY | ERRNO
    | NO_NEW_PRIVILEGES | CAPABILITIES | DROP | KEEP | USER | ENV
    ;

WARD        : 'ward' ;
IMPORT      : 'import' ;
LET         : 'let' ;
GROUP       : 'group' ;
ABSTRACT    : 'abstract' ;
POLICY      : 'policy' ;
EXTENDS     : 'extends' ;
DESCRIPTION : 'description' ;
LABELS      : 'labels' ;
FILESYSTEM  : 'filesystem' ;
NETWORK     : 'network' ;
SYSCALLS    : 'syscalls' ;
PROCESS     : 'process' ;
LIMITS      : 'limits' ;
TARGET      : 'target' ;
ALLOW       : 'allow' ;
DENY        : 'deny' ;
READ        : 'read' ;
WRITE       : 'write' ;
EXEC        : 'exec' ;
UNIX        : 'unix' ;
NETLINK     : 'netlink' ;
EGRESS      : 'egress' ;
INGRESS     : 'ingress' ;
TCP         : 'tcp' ;
UDP         : 'udp' ;
ICMP        : 'icmp' ;
TO          : 'to' ;
FROM        : 'from' ;
PORT        : 'port' ;
PORTS       : 'ports' ;
ANY         : 'any' ;
LOOPBACK    : 'loopback' ;
ARCH        : 'arch' ;
DEFAULT     : 'default' ;
KILL        : 'kill' ;
KILL_THREAD : 'kill-thread' ;
TRAP        : 'trap' ;
LOG         : 'log' ;
NOTIFY      : 'notify' ;
ERRNO       : 'errno' ;
IF          : 'if' ;
AND         : 'and' ;
NOT         : 'not' ;
IN          : 'in' ;
NO_NEW_PRIVILEGES : 'no_new_privileges' ;
CAPABILITIES: 'capabilities' ;
DROP        : 'drop' ;
KEEP        : 'keep' ;
USER        : 'user' ;
ENV         : 'env' ;

EQ          : '==' ;
NE          : '!=' ;
LE          : '<=' ;
GE          : '>=' ;
LT          : '<' ;
GT          : '>' ;
AMP         : '&' ;
PIPE        : '|' ;
ASSIGN      : '=' ;
COMMA       : ',' ;
LBRACE      : '{' ;
RBRACE      : '}' ;
LBRACKET    : '[' ;
RBRACKET    : ']' ;

GROUPREF    : '@' [A-Za-z0-9_] [A-Za-z0-9_\-]* ;
STRING      : '"' ( '\\' . | ~["\\\r\n] )* '"' ;

// A slash inside a word must be followed by another word character, so that
// `10.0.0.1// comment` and `a/* c */` still start their comments.
WORD        : WORD_START WORD_PART* ;
fragment WORD_START : [A-Za-z0-9_.:\-] ;
fragment WORD_PART  : [A-Za-z0-9_.:\-] | '/' [A-Za-z0-9_.:\-] ;

LINE_COMMENT  : ( '//' | '#' ) ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
WS            : [ \t\r\n\f]+ -> skip ;
