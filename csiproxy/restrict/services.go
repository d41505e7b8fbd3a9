package restrict

// windowsServices are services Windows Server and Windows nodes run (the
// OS's own, its roles', a Kubernetes node's), none of the SVC-001
// allow-list: the SVC-001 probes draw from them, so a host that refuses a
// list of services it thinks dangerous, rather than every service not on
// its allow-list, lets most of them through.
var windowsServices = []string{
	"AJRouter", "ALG", "AppIDSvc", "Appinfo", "AppMgmt", "AppReadiness", "AppVClient", "AppXSvc",
	"AssignedAccessManagerSvc", "AudioEndpointBuilder", "Audiosrv", "autotimesvc", "AxInstSV",
	"BDESVC", "BFE", "BITS", "BrokerInfrastructure", "Browser", "BTAGService", "BthAvctpSvc",
	"bthserv", "camsvc", "CDPSvc", "CertPropSvc", "ClipSVC", "COMSysApp", "CoreMessagingRegistrar",
	"CryptSvc", "CscService", "DcomLaunch", "dcsvc", "defragsvc", "DeviceAssociationService",
	"DeviceInstall", "DevQueryBroker", "Dhcp", "diagsvc", "DiagTrack", "DialogBlockingService",
	"DispBrokerDesktopSvc", "DisplayEnhancementService", "DmEnrollmentSvc", "dmwappushservice",
	"Dnscache", "DoSvc", "dot3svc", "DPS", "DsmSvc", "DsSvc", "DusmSvc", "Eaphost", "EFS",
	"embeddedmode", "EntAppSvc", "EventLog", "EventSystem", "Fax", "fdPHost", "FDResPub", "fhsvc",
	"FontCache", "FrameServer", "FrameServerMonitor", "gpsvc", "GraphicsPerfSvc", "hidserv", "HvHost",
	"icssvc", "IKEEXT", "InstallService", "InventorySvc", "iphlpsvc", "IpxlatCfgSvc", "KeyIso",
	"KtmRm", "LanmanServer", "lfsvc", "LicenseManager", "lltdsvc", "lmhosts", "LSM", "LxpSvc",
	"MapsBroker", "McpManagementService", "MicrosoftEdgeElevationService", "MixedRealityOpenXRSvc",
	"mpssvc", "MSDTC", "msiserver", "MsKeyboardFilter", "NaturalAuthentication", "NcaSvc",
	"NcbService", "NcdAutoSetup", "Netlogon", "Netman", "netprofm", "NetSetupSvc",
	"NetTcpPortSharing", "NgcCtnrSvc", "NgcSvc", "NlaSvc", "nsi", "p2pimsvc", "p2psvc", "PcaSvc",
	"PeerDistSvc", "perceptionsimulation", "PerfHost", "PhoneSvc", "pla", "PlugPlay", "PNRPAutoReg",
	"PNRPsvc", "PolicyAgent", "Power", "PrintNotify", "ProfSvc", "PushToInstall", "QWAVE", "RasAuto",
	"RasMan", "RemoteAccess", "RemoteRegistry", "RetailDemo", "RmSvc", "RpcEptMapper", "RpcLocator",
	"RpcSs", "SamSs", "SCardSvr", "ScDeviceEnum", "Schedule", "SCPolicySvc", "SDRSVC", "seclogon",
	"SecurityHealthService", "SEMgrSvc", "SENS", "Sense", "SensorDataService", "SensorService",
	"SensrSvc", "SessionEnv", "SgrmBroker", "SharedAccess", "SharedRealitySvc", "ShellHWDetection",
	"shpamsvc", "smphost", "SmsRouter", "SNMPTrap", "spectrum", "Spooler", "sppsvc", "SSDPSRV",
	"ssh-agent", "sshd", "SstpSvc", "StateRepository", "stisvc", "StorSvc", "svsvc", "swprv",
	"SysMain", "SystemEventsBroker", "TabletInputService", "TapiSrv", "TermService",
	"TextInputManagementService", "Themes", "TieringEngineService", "TimeBrokerSvc", "TokenBroker",
	"TrkWks", "TroubleshootingSvc", "TrustedInstaller", "tzautoupdate", "UevAgentService", "uhssvc",
	"UmRdpService", "upnphost", "UserManager", "UsoSvc", "VacSvc", "VaultSvc", "vds", "vmcompute",
	"vmicguestinterface", "vmicheartbeat", "vmickvpexchange", "vmicrdv", "vmicshutdown",
	"vmictimesync", "vmicvmsession", "vmicvss", "vmms", "VSS", "W32Time", "W3SVC", "WaaSMedicSvc",
	"WalletService", "WarpJITSvc", "WAS", "wbengine", "WbioSrvc", "Wcmsvc", "wcncsvc",
	"WdiServiceHost", "WdiSystemHost", "WdNisSvc", "WebClient", "Wecsvc", "WEPHOSTSVC",
	"wercplsupport", "WerSvc", "WFDSConMgrSvc", "WiaRpc", "WinDefend", "WinHttpAutoProxySvc",
	"Winmgmt", "WinRM", "wisvc", "WlanSvc", "wlidsvc", "wlpasvc", "WManSvc", "wmiApSrv",
	"WMPNetworkSvc", "workfolderssvc", "WpcMonSvc", "WPDBusEnum", "WpnService", "wscsvc", "WSearch",
	"wuauserv", "WwanSvc", "XblAuthManager", "XblGameSave", "XboxGipSvc", "XboxNetApiSvc", "ADWS",
	"CertSvc", "DFSR", "Dfs", "DHCPServer", "DNS", "IISADMIN", "IsmServ", "Kdc", "MSSQLSERVER",
	"SQLSERVERAGENT", "NTDS", "RSoPProv", "sacsvr", "WDSServer", "WSusCertServer", "WsusService",
	"docker", "containerd", "kubelet", "kube-proxy", "hns", "csiproxy", "nvagent",
}
