"""Known answers the package checks itself against (``python -m jaxpmac``).

Copied from the repository's test data ``tests/data/conformance/`` so the package needs no files
at run time: Threefish-256 vectors from Hail's RandomSuite, and values produced by Hail 0.2.139.
``STREAM_CASES`` are stream words of docs/spec.md section 2 computed by the pure-Python reference
oracle (tests/reference_oracle.py), which itself reproduces every Hail value above.
``RANDOM123_THREEFRY4X64`` are Random123's published Threefry-4x64 answers.
"""

# (key, tweak, plaintext, ciphertext), 20 rounds.
THREEFISH_KAT = (
    ((0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000),
     (0x0000000000000000, 0x0000000000000000),
     (0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000),
     (0x09218EBDE6C85537, 0x55941F5266D86105, 0x4BD25E16282434DC, 0xEE29EC846BD2E40B)),
    ((0x1716151413121110, 0x1F1E1D1C1B1A1918, 0x2726252423222120, 0x2F2E2D2C2B2A2928),
     (0x0706050403020100, 0x0F0E0D0C0B0A0908),
     (0xF8F9FAFBFCFDFEFF, 0xF0F1F2F3F4F5F6F7, 0xE8E9EAEBECEDEEEF, 0xE0E1E2E3E4E5E6E7),
     (0x008CF75D18C19DA0, 0x1D7D14BE2266E7D8, 0x5D09E0E985FE673B, 0xB4A5480C6039B172)),
)

# Hail 0.2.139: hl.init(global_seed), hl.rand_*(..., seed=seed) at the given row/element uids.
# Fields: global_seed, seed, message, u=rand_unif(0,1), n=rand_norm(0,1), i32=rand_int32(1000),
# i64=rand_int64(), b=rand_bool(0.3).
HAIL_PUBLIC = (
    dict(global_seed=0, seed=0, message=(), u=0.2664972565962568, n=0.1019149217500674,
         i32=65, i64=1217282681397866191, b=True),
    dict(global_seed=0, seed=0, message=(0,), u=0.5820244750020055, n=0.39106897193575335,
         i32=164, i64=3026168996284768099, b=False),
    dict(global_seed=0, seed=0, message=(0, 0), u=0.3519004565731099, n=-1.3283380747603273,
         i32=407, i64=7518926573593254826, b=False),
    dict(global_seed=0, seed=0, message=(0, 0, 0, 0, 0), u=0.8481306224832663,
         n=-0.7094063160151866, i32=696, i64=-5602991079369530695, b=False),
    dict(global_seed=0, seed=0, message=(0, 0, 0, 0, 0, 0, 0, 0, 0), u=0.34167407466149297,
         n=0.8740503409262033, i32=366, i64=6764352773898813291, b=False),
    dict(global_seed=0, seed=1, message=(), u=0.6192543061865846, n=1.3026087993837412,
         i32=238, i64=4399707331823449719, b=False),
    dict(global_seed=0, seed=1, message=(0,), u=0.543383983978762, n=-1.4261258483243853,
         i32=86, i64=1600586498708275894, b=False),
    dict(global_seed=0, seed=1, message=(0, 0), u=0.9430620217614859, n=-0.9786788129111283,
         i32=886, i64=-2100640625280624238, b=False),
    dict(global_seed=0, seed=1, message=(0, 0, 0, 0, 0), u=0.3584323937875475, n=0.5202486025362261,
         i32=433, i64=8000898469994330905, b=False),
    dict(global_seed=0, seed=1, message=(0, 0, 0, 0, 0, 0, 0, 0, 0), u=0.5974170090275198,
         n=-1.8032561796775022, i32=194, i64=3594053267913822446, b=False),
    dict(global_seed=7, seed=0, message=(), u=0.48450378241705533, n=2.698759040247338,
         i32=938, i64=-1143419039452390539, b=False),
    dict(global_seed=7, seed=0, message=(0,), u=0.7113726860446611, n=1.592764974020352,
         i32=422, i64=7798275687276846887, b=False),
    dict(global_seed=7, seed=0, message=(0, 0), u=0.24303064357861628, n=-0.6460315860010244,
         i32=944, i64=-1028495474109834792, b=True),
    dict(global_seed=7, seed=0, message=(0, 0, 0, 0, 0), u=0.5298563816588787, n=0.1238722321923148,
         i32=59, i64=1101506062856665787, b=False),
    dict(global_seed=7, seed=0, message=(0, 0, 0, 0, 0, 0, 0, 0, 0), u=0.8696551353876449,
         n=-0.19915472886855703, i32=739, i64=-4808876717652866146, b=False),
    dict(global_seed=7, seed=1, message=(), u=0.6846438479351099, n=1.2289635777480068,
         i32=369, i64=6812155615287833021, b=False),
    dict(global_seed=7, seed=1, message=(0,), u=0.36818078766454687, n=1.0266940313935249,
         i32=472, i64=8720202977909230748, b=False),
    dict(global_seed=7, seed=1, message=(0, 0), u=0.7141976692185854, n=-0.4250763588589962,
         i32=428, i64=7902499170520680784, b=False),
    dict(global_seed=7, seed=1, message=(0, 0, 0, 0, 0), u=0.6457060049435484,
         n=0.14551917833858655, i32=291, i64=5375602766392591569, b=False),
    dict(global_seed=7, seed=1, message=(0, 0, 0, 0, 0, 0, 0, 0, 0), u=0.47339758639915736,
         n=0.7494258493036458, i32=893, i64=-1962911661750854939, b=False),
)

# (seed, static labels, dynamic uids, first 8 words of the 64-bit stream).
STREAM_CASES = (
    (0x0, (), (),
     (0x5461bb977409abda, 0x9353f4fe554938a2, 0x6befc45be20f5105, 0xa76a8898ce189a36,
      0xb78824f0296d790b, 0x3dcaa983c782b3af, 0x5934394fb0cd6c00, 0xdd5741db3f913cc1)),
    (0x2a, ('noise',), (3,),
     (0x8b994b94dec71df9, 0x3f4390b90eba9866, 0x3292c6580b6c0597, 0x25eae39ec48b6599,
      0xa80dfe31449ad5f3, 0xb0c6502dc35b70d8, 0xf97ea812f7acadaf, 0x0000cc28ae0d78e5)),
    (0xffffffffffffffff, (7, 'ü'), (0, 1, 2, 3, 4, 5, 6, 7, 8),
     (0xaf57abe407198dff, 0x2831aa575733764f, 0x586ef63db436e2d0, 0xa787681b34e15c09,
      0xcb62764a11b7e85c, 0x9d136f10c36dc41e, 0xe46f19153d9c525c, 0x1957ab7769a9325c)),
)

# Random123's known answers for Threefry-4x64 (its kat_vectors file: D. E. Shaw Research,
# Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Threefry-4x64-R is
# Threefish-256 with R rounds and a zero tweak, so these check the cipher independently of Hail,
# at our 20 rounds and at Threefish's full 72. The inputs are Random123's: zeros, all ones, and
# the hexadecimal digits of pi. Fields: (rounds, key, plaintext (Random123's counter), ciphertext).
_PI_COUNTER = (0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89)
_PI_KEY = (0x452821E638D01377, 0xBE5466CF34E90C6C, 0xBE5466CF34E90C6C, 0xC0AC29B7C97C50DD)
_ZEROS = (0,) * 4
_ONES = (2**64 - 1,) * 4
RANDOM123_THREEFRY4X64 = (
    (20, _ZEROS, _ZEROS,
     (0x09218EBDE6C85537, 0x55941F5266D86105, 0x4BD25E16282434DC, 0xEE29EC846BD2E40B)),
    (20, _ONES, _ONES,
     (0x29C24097942BBA1B, 0x0371BBFB0F6F4E11, 0x3C231FFA33F83A1C, 0xCD29113FDE32D168)),
    (20, _PI_KEY, _PI_COUNTER,
     (0xA7E8FDE591651BD9, 0xBAAFD0C30138319B, 0x84A5C1A729E685B9, 0x901D406CCEBC1BA4)),
    (72, _ZEROS, _ZEROS,
     (0x94EEEA8B1F2ADA84, 0xADF103313EAE6670, 0x952419A1F4B16D53, 0xD83F13E63C9F6B11)),
    (72, _ONES, _ONES,
     (0x11518C034BC1FF4C, 0x193F10B8BCDCC9F7, 0xD024229CB58F20D8, 0x563ED6E48E05183F)),
    (72, _PI_KEY, _PI_COUNTER,
     (0xACF412CCAA3B2270, 0xC9E99BD53F2E9173, 0x43DAD469DC825948, 0xFBB19D06C8A2B4DC)),
)
